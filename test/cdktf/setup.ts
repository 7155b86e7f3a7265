// Registers the cdktf Jest matchers (toHaveResourceWithProperties, ...) for every test file; the
// adapter module is small, so suites that never synthesize pay little for it.
import { setupJest } from "cdktf/lib/testing/adapters/jest";

setupJest();
