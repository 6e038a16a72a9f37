// Preloaded into Azurite by scripts/emulators.sh (NODE_OPTIONS=--require): turns off Azurite's
// periodic extent garbage collection (every 10 minutes by default).
//
// That collection is a mark-and-sweep over every extent, on Azurite's only thread: after the
// 16-writer fleet test has made tens of thousands of blobs, one pass blocks every request for
// minutes, and the writers' requests time out ("operation timed out"). Real Azure has no such
// pause. Without it, the in-memory extents of one test run are simply kept until the server
// stops (a few GB at most; Azurite caps in-memory extents at half the RAM).
"use strict";
const path = require("path");
const dir = process.env.MEMFS_AZURITE_DIR;
if (!dir) {
  throw new Error("azurite_no_gc.js: MEMFS_AZURITE_DIR is not set");
}
const constants = require(path.join(dir, "node_modules/azurite/dist/src/blob/utils/constants.js"));
// The collector's interval is a default parameter read when it is constructed: a week.
constants.DEFAULT_GC_INTERVAL_MS = 7 * 24 * 60 * 60 * 1000;
