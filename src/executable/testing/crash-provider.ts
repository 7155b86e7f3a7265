import { createStubProviderService } from "../../plugin/testing/stub-service";
import { runProvider } from "../main";

// A provider executable whose code fails outside any RPC once it serves, as a bug in a timer or
// an unawaited promise would: process.test.ts checks that the failure reaches stderr as a
// redacted hclog line. CRASH_KIND picks "throw" (uncaught exception) or "reject".

const SECRET = `gpr_${"0123456789abcdef".repeat(3)}`;

void runProvider(createStubProviderService(), process.argv.slice(2)).then(() => {
  setTimeout(() => {
    if (process.env.CRASH_KIND === "reject") {
      void Promise.reject(new Error(`rejected while holding ${SECRET}`));
    } else {
      throw new Error(`thrown while holding ${SECRET}`);
    }
  }, 50);
});
