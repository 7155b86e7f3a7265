// Jest's globalTeardown: see temp-dir.ts.
import { teardown } from "./temp-dir";

export default (): void => teardown();
