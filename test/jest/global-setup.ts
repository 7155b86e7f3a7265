// Jest's globalSetup (Jest passes its configuration, which the setup does not need): see temp-dir.ts.
import { setup } from "./temp-dir";

export default (): void => setup();
