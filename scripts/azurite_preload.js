// Preloaded into Azurite by scripts/emulators.sh (NODE_OPTIONS=--require). Two changes to how
// fast Azurite answers once the 16-writer fleet test has made tens of thousands of blobs; none
// to what it answers (conditional writes, errors and listings are untouched).
//
// 1. Its periodic extent garbage collection (every 10 minutes by default) is off. That
//    collection is a mark-and-sweep over every extent, on Azurite's only thread: one pass
//    blocks every request for minutes, and the writers' requests time out ("operation timed
//    out"). Real Azure has no such pause. Without it, the in-memory extents of one test run
//    are simply kept until the server stops (a few GB at most; Azurite caps in-memory extents
//    at half the RAM).
//
// 2. A blob looked up by its whole identity is found through the index on its name. Azurite's
//    metadata store (LokiJS) evaluates `findOne({accountName, containerName, name, snapshot})`
//    one property at a time, in that order, starting from the index of the first: every blob
//    has the same account, so each lookup walked every blob in the store, several times per
//    request. Measured with Azurite's own store (get + put of one blob): 0.36 ms at 1,000
//    blobs, 2.4 ms at 10,000, 18.8 ms at 30,000; with the name first, 0.10, 0.12 and 0.29 ms
//    (0.85 ms at 100,000). The fleet makes some 100,000 blobs, and Azurite's request rate fell
//    sevenfold as they accumulated. The identity is unique (Azurite removes the old document
//    before inserting a new one), so at most one blob matches in either order: the answer is
//    the same document.
"use strict";
const path = require("path");
const dir = process.env.MEMFS_AZURITE_DIR;
if (!dir) {
  throw new Error("azurite_preload.js: MEMFS_AZURITE_DIR is not set");
}
const modules = path.join(dir, "node_modules");

// 1. The collector's interval is a default parameter read when it is constructed: a week.
const constants = require(path.join(modules, "azurite/dist/src/blob/utils/constants.js"));
constants.DEFAULT_GC_INTERVAL_MS = 7 * 24 * 60 * 60 * 1000;

// 2. The blobs collection's name, as Azurite's LokiBlobMetadataStore declares it.
const BLOBS = "$BLOBS_COLLECTION$";
const IDENTITY = ["accountName", "containerName", "name", "snapshot"];
const Loki = require(path.join(modules, "lokijs"));
const findOne = Loki.Collection.prototype.findOne;
if (typeof findOne !== "function") {
  throw new Error("azurite_preload.js: lokijs has no Collection.prototype.findOne");
}
Loki.Collection.prototype.findOne = function (query) {
  if (
    this.name === BLOBS &&
    query !== null &&
    typeof query === "object" &&
    Object.keys(query).length === IDENTITY.length &&
    IDENTITY.every((k) => Object.prototype.hasOwnProperty.call(query, k) && typeof query[k] === "string") &&
    this.binaryIndices &&
    this.binaryIndices.name
  ) {
    const { name, accountName, containerName, snapshot } = query;
    return findOne.call(this, { name, accountName, containerName, snapshot });
  }
  return findOne.call(this, query);
};
