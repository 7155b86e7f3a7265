// Posts the plan report on the pull request of a GitHub Actions run, or updates the comment posted
// before, so that a pull request keeps one report per stack, always the latest. The comment is
// found by the report's first two lines: gpurental plan-report opens its Markdown with the marker
// `<!-- gpurental-plan-report -->` for this, then a heading that names the CDKTF stack. Run by
// `./pipeline.sh comment`.
//
// Needs GITHUB_TOKEN (pull-requests: write) and what GitHub Actions sets by itself: GITHUB_API_URL,
// GITHUB_REPOSITORY, GITHUB_EVENT_PATH (the pull request's number), and GITHUB_SERVER_URL with
// GITHUB_RUN_ID for a link to the run. Plain Node.js 20, no packages.
"use strict";

const { readFileSync } = require("node:fs");

/** GitHub refuses comment bodies longer than this. */
const MAX_BODY = 65_536;
const PAGE = 100;

function need(name) {
  const value = process.env[name];
  if (!value)
    throw new Error(`${name} is not set (GitHub Actions sets it; GITHUB_TOKEN comes from the workflow)`);
  return value;
}

/** The report as the comment's body, with a link to the run, cut to GitHub's limit. */
function commentBody(report) {
  const { GITHUB_SERVER_URL: server, GITHUB_REPOSITORY: repo, GITHUB_RUN_ID: run } = process.env;
  const footer =
    server && run
      ? `\n<sub>[The run, with the whole plan](${server}/${repo}/actions/runs/${run})</sub>\n`
      : "";
  if (report.length + footer.length <= MAX_BODY) return report + footer;
  const cut = "\n\n**The report is too long for a comment and was cut here; the run has all of it.**\n";
  return report.slice(0, MAX_BODY - footer.length - cut.length) + cut + footer;
}

async function github(method, url, body) {
  const res = await fetch(url, {
    method,
    headers: {
      accept: "application/vnd.github+json",
      authorization: `Bearer ${need("GITHUB_TOKEN")}`,
      "content-type": "application/json",
      "user-agent": "gpurental-pipeline",
      "x-github-api-version": "2022-11-28",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) {
    throw new Error(`${method} ${url} answered ${res.status}: ${(await res.text()).slice(0, 500)}`);
  }
  return res.json();
}

async function main(reportFile) {
  if (!reportFile) throw new Error("usage: pr-comment.js <report.md>");
  const report = readFileSync(reportFile, "utf8");
  const [marker, heading] = report.split("\n", 2);
  if (!/^<!--.*-->$/.test(marker) || heading === undefined) {
    throw new Error(
      `${reportFile} does not start with a marker comment: is it gpurental plan-report's Markdown?`,
    );
  }
  const eventFile = need("GITHUB_EVENT_PATH");
  let event;
  try {
    event = JSON.parse(readFileSync(eventFile, "utf8"));
  } catch (err) {
    throw new Error(`cannot read the run's event ${eventFile}: ${err.message}`);
  }
  const number = event?.pull_request?.number;
  if (!Number.isInteger(number))
    throw new Error("this run is not for a pull request: there is nothing to comment on");
  const api = `${(process.env.GITHUB_API_URL || "https://api.github.com").replace(/\/+$/, "")}/repos/${need("GITHUB_REPOSITORY")}`;

  let earlier;
  for (let page = 1; !earlier; page++) {
    const comments = await github("GET", `${api}/issues/${number}/comments?per_page=${PAGE}&page=${page}`);
    earlier = comments.find(
      (c) => typeof c.body === "string" && c.body.startsWith(`${marker}\n${heading}\n`),
    );
    if (comments.length < PAGE) break;
  }
  const body = commentBody(report);
  const comment = earlier
    ? await github("PATCH", `${api}/issues/comments/${earlier.id}`, { body })
    : await github("POST", `${api}/issues/${number}/comments`, { body });
  process.stdout.write(`${earlier ? "Updated" : "Posted"} the plan report: ${comment.html_url}\n`);
}

main(process.argv[2]).catch((err) => {
  process.stderr.write(`pr-comment.js: ${err.message}\n`);
  process.exitCode = 1;
});
