#!/usr/bin/env node
// lspgate's npm launcher: runs the lspgate binary of the platform package npm installed beside
// it (an optional dependency per platform, as esbuild and @biomejs/biome ship), and tells it how
// it was launched so `lspgate setup` writes the command the user runs (`npx -y lspgate`, or this
// launcher's path) into a harness's configuration.
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const PLATFORMS = {
  "linux-x64": "lspgate-linux-x64",
  "linux-arm64": "lspgate-linux-arm64",
  "darwin-arm64": "lspgate-darwin-arm64",
  "darwin-x64": "lspgate-darwin-x64",
};

function binary() {
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORMS[key];
  if (!pkg) {
    fail(`no lspgate binary for ${key} (there are: ${Object.keys(PLATFORMS).join(", ")}); build it with \`cargo install lspgate\``);
  }
  try {
    return require.resolve(`${pkg}/bin/lspgate`);
  } catch {
    fail(`the package ${pkg} (lspgate's binary for ${key}) is not installed: npm skipped an optional dependency (--omit=optional, or a lockfile made on another platform); install it with \`npm install ${pkg}\``);
  }
}

function fail(message) {
  process.stderr.write(`lspgate: ${message}\n`);
  process.exit(1);
}

const exe = binary();
const self = fs.realpathSync(__filename);
// npx (npm exec) runs packages from its cache, under `_npx`: gone at the next cache clean.
const viaNpx = self.split(path.sep).includes("_npx");
const env = { ...process.env, LSPGATE_LAUNCHER: viaNpx ? "npx" : "npm" };
if (!viaNpx) {
  env.LSPGATE_LAUNCHER_PATH = self;
}
const child = spawn(exe, process.argv.slice(2), { stdio: "inherit", env });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (e) => fail(`cannot run ${exe}: ${e.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
