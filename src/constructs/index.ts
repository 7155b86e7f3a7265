export * from "./api-key";
export * from "./instance";
export * from "./lookups";
export * from "./provider";
export type { OfferFilterProps } from "./validation";
