// Runs one conformance vector (Tests/conformance/README.md) against herald.js and lists what differed.
// An ES module: `runVector(Herald, vector)` resolves to `{failures: [{step, field, expected, actual}]}`,
// empty when the client passed. Tests/browser/test_conformance.py runs every vector in headless Chromium.
// The client gets the testing hooks of docs/web-client.md: the vector's clock, an in-memory storage that
// survives `restart`, a fetch that serves the vector's feed, image loads the vector decides, and a renderer
// that records what it is given. Its server takes uploads and beacons, and the events compared at the end
// are all the client made: those it sent, then those still queued; the discard counts likewise.

const REASONS = ["orientation", "image_fetch", "timeout", "delegate", "renderer_timeout", "ineligible", "stack_full", "throttled"];
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const EVENT_FIELDS = ["type", "campaignId", "language", "action", "url", "dismissType", "errorCode", "event"];

/** A Storage (getItem, setItem, removeItem) in memory, so a vector never touches the page's localStorage. */
class MemoryStorage {
  constructor() {
    this.items = new Map();
  }

  getItem(key) {
    return this.items.has(key) ? this.items.get(key) : null;
  }

  setItem(key, value) {
    this.items.set(key, String(value));
  }

  removeItem(key) {
    this.items.delete(key);
  }
}

/** A seeded generator (mulberry32): jitter and ids are the same on every run. */
function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const idOf = (message) => (message.local ? "local" : message.campaignId);
const normalized = (value) => (value === undefined ? null : value);
const same = (a, b) => JSON.stringify(normalized(a)) === JSON.stringify(normalized(b));
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

/** The world around the client: the clock, the device, the server, the images and the renderer. */
class World {
  constructor(vector) {
    this.vector = vector;
    this.start = Date.parse(vector.start);
    this.now = this.start;
    const device = vector.device || {};
    this.device = {
      platform: "web",
      appVersion: "",
      language: "en",
      country: "",
      userProperties: {},
      orientation: "portrait",
      ...device,
    };
    this.firstOpen = device.firstOpen ? Date.parse(device.firstOpen) : this.start;
    this.storage = new MemoryStorage();
    this.random = seededRandom(1);
    this.feed = vector.feed;
    this.feedRevision = 1;
    this.decision = "show";
    this.images = new Map(Object.entries(vector.images || {}).map(([url, status]) => [url, { status, waiting: [] }]));
    this.onScreen = null;
    this.sent = new Map();
    this.sentDiscards = new Map();
    this.changedDiscards = [];
    this.beacons = [];
    this.beginStep();
  }

  beginStep() {
    this.shown = [];
    this.withdrawn = [];
    this.noMatch = [];
  }

  async fetch(url, init) {
    const headers = (init && init.headers) || {};
    if (String(url).includes("/api/v1/feed")) {
      const etag = `"r${this.feedRevision}"`;
      if (headers["If-None-Match"] === etag) return new Response(null, { status: 304, headers: { ETag: etag } });
      return new Response(JSON.stringify(this.feed), { status: 200, headers: { ETag: etag, "Content-Type": "application/json" } });
    }
    const batch = JSON.parse(init.body);
    this.received(batch);
    return new Response(JSON.stringify({ accepted: batch.events.length, duplicates: 0, rejected: [] }), { status: 200 });
  }

  /** What the server was sent, by upload or beacon; an id sent twice counts once, as Herald counts it, and a
   *  discard count sent again under its id must say the same. */
  received(batch) {
    for (const event of batch.events) {
      if (!this.sent.has(event.id)) this.sent.set(event.id, event);
    }
    for (const count of batch.discards || []) {
      const earlier = this.sentDiscards.get(count.id);
      if (earlier === undefined) this.sentDiscards.set(count.id, count);
      else if (earlier.count !== count.count) this.changedDiscards.push(count.id);
    }
  }

  /** Beacons go to this world's server while a vector runs (navigator.sendBeacon is the page's). */
  interceptBeacons() {
    if (typeof navigator === "undefined" || typeof navigator.sendBeacon !== "function") return () => undefined;
    const original = navigator.sendBeacon;
    navigator.sendBeacon = (url, body) => {
      this.beacons.push(body.text().then((text) => this.received(JSON.parse(text))));
      return true;
    };
    return () => {
      navigator.sendBeacon = original;
    };
  }

  /** Every event the client made, oldest first: what reached the server, then what is still queued. */
  async allEvents(client) {
    await Promise.all(this.beacons);
    const events = [...this.sent.values()];
    for (const event of client.queuedEvents) {
      if (!this.sent.has(event.id)) events.push(event);
    }
    return events;
  }

  /** Every discard count the client made: those it sent, then those still waiting. */
  async allDiscards(client) {
    await Promise.all(this.beacons);
    const counts = [...this.sentDiscards.values()];
    for (const count of client.pendingDiscards) {
      if (!this.sentDiscards.has(count.id)) counts.push(count);
    }
    return counts;
  }

  loadImage(url) {
    const image = this.images.get(url) || { status: "ok", waiting: [] };
    this.images.set(url, image);
    if (image.status === "ok") return Promise.resolve(true);
    if (image.status === "fail") return Promise.resolve(false);
    return new Promise((resolve) => image.waiting.push(resolve));
  }

  settleImage(url, ok) {
    const image = this.images.get(url) || { status: "pending", waiting: [] };
    image.status = ok ? "ok" : "fail";
    this.images.set(url, image);
    for (const resolve of image.waiting.splice(0)) resolve(ok);
  }

  get renderer() {
    return {
      display: (message, report) => {
        this.shown.push(message);
        this.onScreen = { message, report };
      },
      withdraw: (message) => {
        this.withdrawn.push(idOf(message));
        if (this.onScreen && this.onScreen.message === message) this.onScreen = null;
      },
    };
  }

  /** What the renderer reports about the message on screen; the display ends with anything but an impression. */
  report(kind, ...args) {
    if (!this.onScreen) throw new Error(`the renderer has no message on screen to report ${kind} for`);
    const { report } = this.onScreen;
    if (kind !== "impression") this.onScreen = null;
    report[kind](...args);
  }

  async makeClient(Herald) {
    const options = this.vector.options || {};
    const renderer = this.vector.rendererAtStart === false ? null : this.renderer;
    return Herald.start({
      server: "https://herald.test",
      apiKey: "hrld_conformance",
      language: this.device.language,
      installationId: this.device.installationId,
      appVersion: this.device.appVersion,
      country: this.device.country,
      userProperties: this.device.userProperties,
      dataCollection: options.dataCollection,
      minimumIntervalSeconds: options.minimumIntervalSeconds,
      sessionTimeoutSeconds: options.sessionTimeoutSeconds,
      displayTimeoutSeconds: options.displayTimeoutSeconds,
      rendererTimeoutSeconds: options.rendererTimeoutSeconds,
      delegate: {
        decide: () => this.decision,
        noMatchingTrigger: (event) => this.noMatch.push(event),
        clicked: () => false,
      },
      renderer,
      clock: () => this.now,
      storage: this.storage,
      fetch: (url, init) => this.fetch(url, init),
      loadImage: (url) => this.loadImage(url),
      random: this.random,
      orientation: () => this.device.orientation,
      platform: () => this.device.platform,
      firstOpen: this.firstOpen,
      launch: false,
      lifecycle: false,
    });
  }
}

/** Runs the step and returns the outcomes of the triggers it fired. */
async function runStep(Herald, world, client, step) {
  switch (step.do) {
    case "start": return { outcomes: client.launch() };
    case "trigger": return { outcomes: [client.triggerEvent(step.event, step.properties || {})] };
    case "advance":
      world.now += step.seconds * 1000;
      await client.tick();
      return {};
    case "impression": world.report("impression"); return {};
    case "click": world.report("click", step.action, step.url); return {};
    case "dismiss": world.report("dismiss", step.type); return {};
    case "error": world.report("error", step.code); return {};
    case "conversion": client.recordConversion(step.event); return {};
    case "displayNext": client.displayNext(); return {};
    case "background": client.background(); return {};
    case "foreground": return { outcomes: client.foreground() };
    case "restart":
      client.stop();
      world.onScreen = null;
      return { client: await world.makeClient(Herald) };
    case "suppress": client.setSuppressed(step.value); return {};
    case "dataCollection": client.setDataCollection(step.value); return {};
    case "device": {
      const changes = { ...step };
      delete changes.do;
      delete changes.expect;
      Object.assign(world.device, changes);
      await client.updateDevice(changes);
      return {};
    }
    case "decide": world.decision = step.answer; return {};
    case "registerRenderer": client.setRenderer(world.renderer); return {};
    case "settleImage": world.settleImage(step.url, step.ok); return {};
    case "feed":
      world.feed = step.feed;
      world.feedRevision += 1;
      await client.refresh();
      return {};
    case "pushReceived":
      if (step.feed) {
        world.feed = step.feed;
        world.feedRevision += 1;
      }
      await client.pushReceived(step.userInfo);
      return {};
    case "pushOpened": return { outcomes: [client.pushOpened(step.userInfo)] };
    case "addToStack": client.addToStack(step.message, step.data); return {};
    default: throw new Error(`unknown step "${step.do}"`);
  }
}

function compareStep(index, expect, world, client, outcomes, failures) {
  const fail = (field, expected, actual) => failures.push({ step: index, field, expected, actual });
  if ("outcomes" in expect) {
    const actual = outcomes.map((outcome) => {
      const row = { event: outcome.event, outcome: outcome.outcome };
      if (outcome.campaign !== undefined) row.campaign = outcome.campaign;
      if (outcome.reason !== undefined) row.reason = outcome.reason;
      return row;
    });
    const matches = actual.length === expect.outcomes.length && expect.outcomes.every((wanted, at) =>
      ["event", "outcome", "campaign", "reason"].every((key) => same(wanted[key], actual[at][key])));
    if (!matches) fail("outcomes", expect.outcomes, actual);
  }
  if ("shown" in expect) {
    const wanted = expect.shown;
    const actual = world.shown.map((message) => ({
      campaign: idOf(message),
      language: normalized(message.language),
      title: message.message.title ? message.message.title.text : null,
      data: message.data.map((pair) => ({ key: pair.key, value: pair.value })),
    }));
    if (wanted === null || (typeof wanted !== "object")) {
      const ids = actual.map((message) => message.campaign);
      if (!same(wanted === null ? [] : [wanted], ids)) fail("shown", wanted, ids.length === 0 ? null : ids);
    } else {
      const matches = actual.length === 1 && same(wanted.campaign, actual[0].campaign)
        && (!("language" in wanted) || same(wanted.language, actual[0].language))
        && (!("title" in wanted) || same(wanted.title, actual[0].title))
        && (!("data" in wanted) || same(wanted.data, actual[0].data));
      if (!matches) fail("shown", wanted, actual);
    }
  }
  if ("slot" in expect) {
    const slot = client.slot;
    const actual = slot === null ? null : slot.local ? "local" : slot.campaignId;
    if (!same(expect.slot, actual)) fail("slot", expect.slot, actual);
  }
  if ("stack" in expect) {
    const actual = client.stack.map((entry) => (entry.local ? "local" : entry.campaignId));
    if (!same(expect.stack, actual)) fail("stack", expect.stack, actual);
  }
  if ("discards" in expect) {
    const counts = client.discards;
    for (const [reason, count] of Object.entries(expect.discards)) {
      if (!REASONS.includes(reason)) fail(`discards.${reason}`, count, "not a discard reason");
      else if (counts[reason] !== count) fail(`discards.${reason}`, count, counts[reason]);
    }
  }
  if ("withdrawn" in expect) {
    const wanted = expect.withdrawn === null ? [] : [expect.withdrawn];
    if (!same(wanted, world.withdrawn)) fail("withdrawn", expect.withdrawn, world.withdrawn);
  }
  if ("noMatch" in expect && !same(expect.noMatch, world.noMatch)) fail("noMatch", expect.noMatch, world.noMatch);
}

function compareEvents(expected, queued, world, failures) {
  const fail = (field, wanted, actual) => failures.push({ step: "events", field, expected: wanted, actual });
  const ids = queued.map((event) => event.id);
  if (!ids.every((id) => UUID_V7.test(id))) fail("id", "UUIDv7 ids", ids);
  if (new Set(ids).size !== ids.length) fail("id", "distinct ids", ids);
  const seen = queued.map((event) => {
    const row = { secondsAfterStart: (Date.parse(event.occurredAt) - world.start) / 1000 };
    for (const field of EVENT_FIELDS) if (event[field] !== undefined) row[field] = event[field];
    row.installationId = event.installationId === undefined ? false : event.installationId === world.device.installationId || event.installationId;
    return row;
  });
  if (seen.length !== expected.length) {
    fail("events", expected, seen);
    return;
  }
  expected.forEach((wanted, at) => {
    const actual = seen[at];
    for (const field of EVENT_FIELDS) {
      if (!same(wanted[field], actual[field])) fail(`events[${at}].${field}`, normalized(wanted[field]), normalized(actual[field]));
    }
    if ("secondsAfterStart" in wanted && Math.abs(wanted.secondsAfterStart - actual.secondsAfterStart) > 0.0005) {
      fail(`events[${at}].secondsAfterStart`, wanted.secondsAfterStart, actual.secondsAfterStart);
    }
    if ("installationId" in wanted && !same(wanted.installationId, actual.installationId)) {
      fail(`events[${at}].installationId`, wanted.installationId, actual.installationId);
    }
  });
}

/** The counts summed per campaign, reason, day and whether they carry the device's installation id, in
 *  one order: how a vector states them, whatever uploads split them into. */
function summedDiscards(counts, world) {
  const sums = new Map();
  for (const count of counts) {
    const installationId = count.installationId === undefined ? false : count.installationId === world.device.installationId || count.installationId;
    const key = JSON.stringify([count.campaignId, count.reason, count.day, installationId]);
    sums.set(key, (sums.get(key) || 0) + count.count);
  }
  return [...sums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, count]) => {
    const [campaignId, reason, day, installationId] = JSON.parse(key);
    return { campaignId, reason, day, count, installationId };
  });
}

function compareDiscards(expected, counts, world, failures) {
  const fail = (field, wanted, actual) => failures.push({ step: "discardCounts", field, expected: wanted, actual });
  const ids = counts.map((count) => count.id);
  if (!ids.every((id) => UUID_V7.test(id))) fail("id", "UUIDv7 ids", ids);
  if (new Set(ids).size !== ids.length) fail("id", "distinct ids", ids);
  if (world.changedDiscards.length > 0) fail("count", "a count sent again unchanged", world.changedDiscards);
  const wanted = summedDiscards(expected.map((count) => ({ ...count, installationId: count.installationId ? world.device.installationId : undefined })), world);
  const actual = summedDiscards(counts, world);
  if (!same(wanted, actual)) fail("discardCounts", wanted, actual);
}

/** Runs `vector` with a client made by `Herald`; resolves to the differences found. */
export async function runVector(Herald, vector) {
  const world = new World(vector);
  const failures = [];
  const restoreBeacons = world.interceptBeacons();
  let client = await world.makeClient(Herald);
  try {
    for (const [index, step] of (vector.steps || []).entries()) {
      world.beginStep();
      let outcomes = [];
      try {
        const result = await runStep(Herald, world, client, step);
        if (result.client) client = result.client;
        outcomes = result.outcomes || [];
      } catch (error) {
        failures.push({ step: index, field: "error", expected: null, actual: String(error && error.stack || error) });
        continue;
      }
      await nextTask(); // images that settled, and what they set going
      if (step.expect) compareStep(index, step.expect, world, client, outcomes, failures);
    }
    if (Array.isArray(vector.events)) compareEvents(vector.events, await world.allEvents(client), world, failures);
    if (Array.isArray(vector.discardCounts)) compareDiscards(vector.discardCounts, await world.allDiscards(client), world, failures);
  } finally {
    client.stop();
    restoreBeacons();
  }
  return { failures };
}
