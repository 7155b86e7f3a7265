export * from "./api-key";
export * from "./instance";
export * from "./lookups";
export * from "./provider";
