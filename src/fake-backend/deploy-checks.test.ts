import { compareVersions } from "./deploy-checks";

describe("compareVersions", () => {
  it.each([
    ["12.10", "12.9", 1],
    ["12.9", "12.10", -1],
    ["12.4", "12.4", 0],
    ["12", "12.0", 0],
    ["12", "12.1", -1],
    ["12.1", "12", 1],
    ["12.1.1", "12.1", 1],
    ["13", "12.9.9", 1],
    ["x.2", "0.2", 0],
  ])("%s against %s is %i", (a, b, sign) => {
    expect(Math.sign(compareVersions(a, b))).toBe(sign);
  });
});
