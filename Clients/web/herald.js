// herald.js: Herald's web delivery client. Plain ES2020, no dependencies, no build step.
// Herald serves this file wrapped twice: as a classic script (/sdk/v1/herald.js, which sets
// globalThis.Herald) and as an ES module (/sdk/v1/herald.mjs, `import Herald from …`), so the
// source itself only declares `Herald`. The rules it follows are docs/delivery-semantics.md (the
// same as the Swift client's, pinned by Tests/conformance/); how a web app uses it is docs/web-client.md.
const Herald = (() => {
  "use strict";

  const SDK_VERSION = "1";

  const DEFAULTS = Object.freeze({
    sessionTimeoutSeconds: 10,
    displayTimeoutSeconds: 10,
    rendererTimeoutSeconds: 10,
    minimumIntervalSeconds: 30,
    pollAfterSeconds: 60,
  });

  const LIMITS = Object.freeze({
    stack: 50,
    queue: 1000,
    batch: 500,
    // Discard counts waiting (one per campaign, reason and UTC day), what one may say, and how many a batch carries.
    discardCounts: 200,
    discardCount: 10000,
    discardBatch: 500,
    // A beacon's body: Chrome allows 64 KiB of keep-alive bodies in flight, headers not counted.
    beaconBytes: 60000,
    backoffSeconds: 300,
    jitter: 0.2,
    versionLength: 256,
    patternLength: 100,
    // A version regex that runs longer than this does not match (docs/campaign-json.md).
    patternBudgetMs: 10,
    // A worker that has not answered by then is stuck in a pattern: it is terminated.
    patternWorkerMs: 250,
    patternWorkerStartMs: 3000,
    patternResults: 1000,
    campaigns: 1000,
    images: 500,
    impressionsKept: 1000,
    requestMs: 15000,
    pollSeconds: [1, 86400],
    // setTimeout's longest delay; a later deadline is waited for in steps.
    timerMs: 2147483647,
    // Events wait this long after the last one before an upload, so a burst goes in one request.
    uploadDelayMs: 2000,
  });

  const LAYOUTS = ["card", "modal", "image_only", "banner", "slideup", "fullscreen"];
  const DISCARD_REASONS = ["orientation", "image_fetch", "timeout", "delegate", "renderer_timeout", "ineligible", "stack_full", "throttled"];
  const CLICK_ACTIONS = ["primary", "secondary", "body"];
  const DISMISS_TYPES = ["auto", "click", "swipe", "unknown"];
  const ERROR_CODES = ["image_fetch", "image_display", "image_format", "unspecified"];
  const DAY_MS = 86400000;
  const RIGHT_TO_LEFT_LANGUAGES = ["ar", "fa", "he", "iw", "ur", "ps", "sd", "ug", "yi", "dv", "ckb"];

  // ---- Small values -----------------------------------------------------------------------------

  const isRecord = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
  const isFilterValue = (value) => typeof value === "string" || typeof value === "number" || typeof value === "boolean";
  const ownProperty = (object, key) => isRecord(object) && Object.prototype.hasOwnProperty.call(object, key);
  const nonBlank = (value) => typeof value === "string" && value.trim() !== "";
  const finiteOr = (value, fallback) => (typeof value === "number" && Number.isFinite(value) ? value : fallback);

  /** Milliseconds since 1970 of an RFC 3339 time, or null for anything else. */
  function parseTime(value) {
    if (typeof value !== "string") return null;
    const milliseconds = Date.parse(value);
    return Number.isFinite(milliseconds) ? milliseconds : null;
  }

  /** Errors in the app's callbacks are the app's: thrown again outside the client, so its state stays whole. */
  function rethrowLater(error) {
    setTimeout(() => {
      throw error;
    }, 0);
  }

  function callDelegate(delegate, name, ...args) {
    const callback = delegate && delegate[name];
    if (typeof callback !== "function") return undefined;
    try {
      return callback.apply(delegate, args);
    } catch (error) {
      rethrowLater(error);
      return undefined;
    }
  }

  // ---- Hashes and ids ---------------------------------------------------------------------------

  const FNV_OFFSET = 0xcbf29ce484222325n;
  const FNV_PRIME = 0x100000001b3n;
  const MASK_64 = 0xffffffffffffffffn;
  const utf8 = new TextEncoder();

  /** FNV-1a, 64 bits, over the UTF-8 bytes of `text`: the Swift client's hash, byte for byte. */
  function fnv1a64(text) {
    let hash = FNV_OFFSET;
    for (const byte of utf8.encode(text)) {
      hash ^= BigInt(byte);
      hash = (hash * FNV_PRIME) & MASK_64;
    }
    return hash;
  }

  /** The installation's bucket 0–99 for a campaign: sticky, whatever the data-collection choice. */
  function rolloutBucket(campaignId, installationId) {
    return Number(fnv1a64(`${campaignId}:${installationId}`) % 100n);
  }

  function randomBytes(count, random) {
    const bytes = new Uint8Array(count);
    if (random) {
      for (let index = 0; index < count; index += 1) bytes[index] = Math.floor(random() * 256) & 0xff;
    } else {
      globalThis.crypto.getRandomValues(bytes);
    }
    return bytes;
  }

  function uuidText(bytes) {
    const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  /** UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits, so ids sort by time. */
  function uuidV7(milliseconds, random) {
    const bytes = randomBytes(16, random);
    let time = Math.max(0, Math.floor(milliseconds));
    for (let index = 5; index >= 0; index -= 1) {
      bytes[index] = time % 256;
      time = Math.floor(time / 256);
    }
    bytes[6] = 0x70 | (bytes[6] & 0x0f);
    bytes[8] = 0x80 | (bytes[8] & 0x3f);
    return uuidText(bytes);
  }

  function uuidV4(random) {
    const bytes = randomBytes(16, random);
    bytes[6] = 0x40 | (bytes[6] & 0x0f);
    bytes[8] = 0x80 | (bytes[8] & 0x3f);
    return uuidText(bytes);
  }

  // ---- Matching and eligibility (docs/delivery-semantics.md §2) ---------------------------------

  // Swift compares strings by canonical equivalence: "é" precomposed equals "e" and a combining accent.
  const canonical = (text) => text.normalize("NFC");

  function sameValue(actual, expected) {
    if (typeof actual !== typeof expected) return false;
    return typeof actual === "string" ? canonical(actual) === canonical(expected) : actual === expected;
  }

  /** Whether `properties` satisfy `filter`: typed comparisons; a filter on a missing property fails, except `exists`. */
  function filterHolds(filter, properties) {
    if (!isRecord(filter) || typeof filter.property !== "string") return false;
    const carried = ownProperty(properties, filter.property) && isFilterValue(properties[filter.property]);
    if (filter.op === "exists") return carried;
    if (!carried || !isFilterValue(filter.value)) return false;
    const actual = properties[filter.property];
    const expected = filter.value;
    const numbers = typeof actual === "number" && typeof expected === "number";
    switch (filter.op) {
      case "eq": return sameValue(actual, expected);
      case "ne": return !sameValue(actual, expected);
      case "gt": return numbers && actual > expected;
      case "gte": return numbers && actual >= expected;
      case "lt": return numbers && actual < expected;
      case "lte": return numbers && actual <= expected;
      case "contains":
        return typeof actual === "string" && typeof expected === "string" && canonical(actual).includes(canonical(expected));
      default: return false;
    }
  }

  function triggerFires(campaign, event, properties) {
    return campaign.triggers.some((trigger) => isRecord(trigger) && trigger.event === event
      && (!Array.isArray(trigger.filters) || trigger.filters.every((filter) => filterHolds(filter, properties))));
  }

  /** `pt` matches `pt`, `pt-BR` and `PT-br`; `pt-BR` does not match `pt`. */
  function languageMatches(wanted, actual) {
    const target = String(wanted).toLowerCase();
    const language = String(actual).toLowerCase();
    return target === language || language.startsWith(`${target}-`);
  }

  /** Inside the schedule window; test campaigns ignore the schedule. */
  function scheduled(campaign, now) {
    if (campaign.test) return true;
    if (campaign.start !== null && campaign.start > now) return false;
    return campaign.end === null || now < campaign.end;
  }

  /** Whether the campaign targets this device; `context` holds what the client keeps (first open, installation, regex results). */
  function targets(campaign, device, context) {
    const targeting = campaign.targeting;
    if (Array.isArray(targeting.platforms) && !targeting.platforms.includes(device.platform)) return false;
    const versionRule = targeting.appVersion;
    if (isRecord(versionRule)) {
      const rule = String(versionRule.value ?? "");
      const version = canonical(device.appVersion);
      switch (versionRule.op) {
        case "equals": if (version !== canonical(rule)) return false; break;
        case "contains": if (!version.includes(canonical(rule))) return false; break;
        case "not_contains": if (version.includes(canonical(rule))) return false; break;
        case "regex": if (!context.versionMatches(rule, device.appVersion)) return false; break;
        default: return false;
      }
    }
    if (Array.isArray(targeting.languages) && !targeting.languages.some((language) => languageMatches(language, device.language))) return false;
    if (Array.isArray(targeting.countries)) {
      const country = String(device.country).toUpperCase();
      if (!targeting.countries.some((wanted) => String(wanted).toUpperCase() === country)) return false;
    }
    if (Array.isArray(targeting.userProperties) && !targeting.userProperties.every((filter) => filterHolds(filter, device.userProperties))) return false;
    if (isRecord(targeting.daysSinceFirstOpen)) {
      const days = Math.floor((context.now - context.firstOpen) / DAY_MS);
      const { min, max } = targeting.daysSinceFirstOpen;
      if (typeof min === "number" && days < min) return false;
      if (typeof max === "number" && days > max) return false;
    }
    if (typeof targeting.percentage === "number" && rolloutBucket(campaign.id, context.installationId) >= targeting.percentage) return false;
    return true;
  }

  /** Frequency, from the campaign's last impression on this device. */
  function frequencyAllows(campaign, lastImpression, now) {
    if (typeof lastImpression !== "number") return true;
    switch (campaign.frequency.type) {
      case "always": return true;
      case "every_n_days": return now - lastImpression >= finiteOr(campaign.frequency.days, 1) * DAY_MS;
      default: return false; // "once", and a type this client does not know: never twice
    }
  }

  /** The lowest priority number; on a tie the latest start; on a tie again the higher id. */
  function choose(candidates) {
    let best = null;
    for (const campaign of candidates) {
      if (best === null
        || campaign.priority < best.priority
        || (campaign.priority === best.priority && campaign.startedAt > best.startedAt)
        || (campaign.priority === best.priority && campaign.startedAt === best.startedAt && campaign.id > best.id)) {
        best = campaign;
      }
    }
    return best;
  }

  // ---- Messages: the parts each layout needs, language versions, direction ----------------------

  /** A message devices can draw: the layout's required parts are there (Herald refuses to publish one without). */
  function messageProblem(message) {
    if (!isRecord(message)) return "a message is an object";
    if (!LAYOUTS.includes(message.layout)) return `layout must be one of ${LAYOUTS.join(", ")}`;
    for (const field of ["imageUrl", "landscapeImageUrl"]) {
      const value = message[field];
      if (value !== undefined && value !== null && typeof value !== "string") return `${field} is a URL`;
    }
    const hasTitle = isRecord(message.title) && nonBlank(message.title.text);
    const hasBody = isRecord(message.body) && nonBlank(message.body.text);
    const hasImage = nonBlank(message.imageUrl);
    switch (message.layout) {
      case "card": return hasTitle && hasImage ? null : "a card needs title.text and imageUrl";
      case "modal": case "banner": return hasTitle ? null : `a ${message.layout} needs title.text`;
      case "image_only": return hasImage ? null : "an image_only message needs imageUrl";
      case "slideup": return hasBody ? null : "a slideup needs body.text";
      default: return hasTitle && hasImage ? null : "a fullscreen message needs title.text and imageUrl";
    }
  }

  /** The tags to try for a device's language, most specific first: `pt-BR` → `pt-br`, `pt`. */
  function languageFallbacks(language) {
    const parts = String(language).toLowerCase().split(/[-_]/).filter((part) => part !== "");
    const tags = [];
    while (parts.length > 0) {
      tags.push(parts.join("-"));
      parts.pop();
    }
    return tags;
  }

  function isRightToLeftLanguage(tag) {
    const tags = languageFallbacks(tag);
    return tags.length > 0 && RIGHT_TO_LEFT_LANGUAGES.includes(tags[tags.length - 1]);
  }

  function applyButton(version, button) {
    if (!isRecord(version)) return button;
    const result = isRecord(button) ? { ...button } : { text: "" };
    if (typeof version.text === "string") result.text = version.text;
    if (typeof version.url === "string") result.url = version.url;
    return result;
  }

  /** The version for `language` (the translation whose tag matches most closely, over the default), and its tag or null. */
  function messageVersion(message, language) {
    const translations = isRecord(message.translations) ? message.translations : {};
    let tag = null;
    for (const candidate of languageFallbacks(language)) {
      tag = Object.keys(translations).find((key) => key.toLowerCase() === candidate) ?? null;
      if (tag !== null) break;
    }
    const version = tag === null || !isRecord(translations[tag]) ? {} : translations[tag];
    const resolved = { ...message };
    delete resolved.translations;
    for (const part of ["title", "body"]) {
      if (isRecord(version[part]) && typeof version[part].text === "string") {
        resolved[part] = { ...(isRecord(message[part]) ? message[part] : {}), text: version[part].text };
      }
    }
    for (const part of ["imageUrl", "landscapeImageUrl"]) {
      if (typeof version[part] === "string") resolved[part] = version[part];
    }
    if (ownProperty(version, "primaryAction")) resolved.primaryAction = applyButton(version.primaryAction, message.primaryAction);
    if (ownProperty(version, "secondaryAction")) resolved.secondaryAction = applyButton(version.secondaryAction, message.secondaryAction);
    if (isRecord(version.action) && typeof version.action.url === "string") resolved.action = { url: version.action.url };
    return { language: tag, message: resolved };
  }

  /** The images a message must have loaded before it shows: its image, and a card's landscape image. */
  /** The images a message needs: whatever its image fields hold, so one that is not a URL fails (§3.2). */
  function imagesOf(message) {
    const present = (value) => value !== undefined && value !== null && value !== "";
    const urls = [];
    if (present(message.imageUrl)) urls.push(message.imageUrl);
    if (message.layout === "card" && present(message.landscapeImageUrl)) urls.push(message.landscapeImageUrl);
    return urls;
  }

  /**
   * Images are https URLs (Herald refuses others); http only from a loopback host, so a developer's own
   * machine can serve test images. Nothing else is fetched: it fails as `image_fetch`, as in Swift.
   */
  function fetchableImage(url) {
    if (typeof url !== "string") return false;
    let parsed;
    try {
      parsed = new URL(url);
    } catch {
      return false;
    }
    if (parsed.protocol === "https:") return true;
    return parsed.protocol === "http:" && (parsed.hostname === "localhost" || parsed.hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(parsed.hostname));
  }

  /** Hebrew, Arabic, Syriac, Thaana, N'Ko, Samaritan, Mandaic and their presentation forms (as the console's preview). */
  function isRightToLeftCodePoint(codePoint) {
    return (codePoint >= 0x0590 && codePoint <= 0x08ff) || (codePoint >= 0xfb1d && codePoint <= 0xfdff)
      || (codePoint >= 0xfe70 && codePoint <= 0xfeff) || (codePoint >= 0x10800 && codePoint <= 0x10fff)
      || (codePoint >= 0x1e800 && codePoint <= 0x1efff);
  }

  /** The direction of the first strongly directional letter, as `dir="auto"` decides. */
  function textDirection(texts) {
    for (const text of texts) {
      for (const character of text) {
        if (/\p{Alphabetic}/u.test(character)) return isRightToLeftCodePoint(character.codePointAt(0)) ? "rtl" : "ltr";
      }
    }
    return "ltr";
  }

  // ---- The feed ---------------------------------------------------------------------------------

  function readData(data) {
    if (Array.isArray(data)) {
      return data.filter((pair) => isRecord(pair) && typeof pair.key === "string" && typeof pair.value === "string")
        .map((pair) => ({ key: pair.key, value: pair.value }));
    }
    if (isRecord(data)) {
      return Object.keys(data).filter((key) => typeof data[key] === "string").map((key) => ({ key, value: data[key] }));
    }
    return [];
  }

  /** A feed campaign as the client uses it, or null for one it cannot act on. Read leniently: unknown keys are ignored. */
  function readCampaign(raw) {
    if (!isRecord(raw) || !Number.isSafeInteger(raw.id) || messageProblem(raw.message) !== null) return null;
    const schedule = isRecord(raw.schedule) ? raw.schedule : {};
    return {
      id: raw.id,
      priority: finiteOr(raw.priority, 10),
      startedAt: parseTime(raw.startedAt) ?? -Infinity,
      start: parseTime(schedule.start),
      end: parseTime(schedule.end),
      triggers: Array.isArray(raw.triggers) ? raw.triggers : [],
      frequency: isRecord(raw.frequency) ? raw.frequency : { type: "once" },
      targeting: isRecord(raw.targeting) ? raw.targeting : {},
      message: raw.message,
      data: readData(raw.data),
      test: raw.test === true,
    };
  }

  function readFeed(text) {
    const raw = JSON.parse(text);
    if (!isRecord(raw) || !Array.isArray(raw.campaigns)) throw new TypeError("the feed has no campaigns list");
    const app = isRecord(raw.app) ? raw.app : {};
    const [fewest, most] = LIMITS.pollSeconds;
    return {
      minIntervalSeconds: Math.max(0, finiteOr(app.minIntervalSeconds, DEFAULTS.minimumIntervalSeconds)),
      pollAfterSeconds: Math.min(most, Math.max(fewest, finiteOr(raw.pollAfterSeconds, DEFAULTS.pollAfterSeconds))),
      campaigns: raw.campaigns.slice(0, LIMITS.campaigns).map(readCampaign).filter((campaign) => campaign !== null),
    };
  }

  // ---- Storage: localStorage, namespaced, and memory when it fails ------------------------------

  /**
   * One client's keys in a Storage (localStorage unless a test gives another). Every change reads the
   * stored value afresh and writes it back, so two tabs of one app keep each other's queue and history.
   * When the storage refuses (unavailable, full), the value lives in memory for this page and the app
   * hears `storageFailed` once per failing key until a write succeeds again.
   */
  class Store {
    constructor(backend, namespace, onFailure) {
      this.backend = backend;
      this.namespace = namespace;
      this.onFailure = onFailure;
      this.memory = new Map();
      // Keys whose latest value is only in memory: the stored one is older.
      this.memoryOnly = new Set();
    }

    read(name) {
      let text = this.memory.get(name);
      if (this.backend && !this.memoryOnly.has(name)) {
        try {
          text = this.backend.getItem(this.namespace + name) ?? undefined;
        } catch (error) {
          this.fail(name, error);
        }
      }
      if (text === undefined) return undefined;
      try {
        return JSON.parse(text);
      } catch {
        return undefined; // written by something else: start afresh
      }
    }

    write(name, value) {
      const text = JSON.stringify(value);
      this.memory.set(name, text);
      if (!this.backend) return;
      try {
        this.backend.setItem(this.namespace + name, text);
        this.memoryOnly.delete(name);
      } catch (error) {
        this.fail(name, error);
      }
    }

    update(name, change) {
      const value = change(this.read(name));
      this.write(name, value);
      return value;
    }

    fail(name, error) {
      if (this.memoryOnly.has(name)) return;
      this.memoryOnly.add(name);
      this.onFailure(error);
    }
  }

  /** The page's localStorage, or null with the reason when the browser refuses it (privacy settings, sandboxed frames). */
  function openLocalStorage() {
    try {
      const storage = globalThis.localStorage;
      const probe = "herald.probe";
      storage.setItem(probe, probe);
      storage.removeItem(probe);
      return { storage, error: null };
    } catch (error) {
      return { storage: null, error };
    }
  }

  // ---- App version patterns: off the main thread ------------------------------------------------

  // A JavaScript RegExp cannot be interrupted, and a pattern such as ^(a+)+$ backtracks for hours on
  // the wrong version string. Patterns run in a worker that is terminated when it takes too long (no
  // match). Results are computed when the feed arrives (or the version changes) and kept per pattern
  // and version, so triggerEvent stays synchronous.
  const PATTERN_WORKER_SOURCE = `
    onmessage = (message) => {
      const { id, pattern, version } = message.data;
      const started = performance.now();
      let matched = false;
      try { matched = new RegExp(pattern).test(version); } catch (error) { matched = false; }
      postMessage({ id, matched, elapsed: performance.now() - started });
    };
    postMessage({ ready: true });`;

  /**
   * Where no worker can be made (a Content-Security-Policy without blob: workers), patterns run on the
   * page, and the ones that can backtrack without end are refused: a quantified group that holds a
   * quantifier, such as (a+)+ or (\d*)*, and backreferences.
   */
  function canBacktrackWithoutEnd(pattern) {
    const groups = [{ quantified: false }];
    let closed = null; // the group that just closed, while the next character may quantify it
    for (let index = 0; index < pattern.length; index += 1) {
      const character = pattern[index];
      if (character === "\\") {
        if (/[1-9k]/.test(pattern[index + 1] ?? "")) return true;
        index += 1;
        closed = null;
      } else if (character === "[") {
        for (index += 1; index < pattern.length && pattern[index] !== "]"; index += 1) {
          if (pattern[index] === "\\") index += 1;
        }
        closed = null;
      } else if (character === "(") {
        groups.push({ quantified: false });
        if (pattern[index + 1] === "?") { // (?: (?= (?! (?<= (?<! (?<name>: not a quantifier
          index += 1;
          if (pattern[index + 1] === "<" && pattern[index + 2] !== "=" && pattern[index + 2] !== "!") {
            while (index < pattern.length && pattern[index] !== ">") index += 1;
          } else {
            index += pattern[index + 1] === "<" ? 2 : 1;
          }
        }
        closed = null;
      } else if (character === ")") {
        closed = groups.length > 1 ? groups.pop() : null;
        if (closed && closed.quantified) groups[groups.length - 1].quantified = true;
      } else if (character === "*" || character === "+" || (character === "{" && /^\{\d+(,\d*)?\}/.test(pattern.slice(index)))) {
        const bounds = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(index));
        const most = !bounds ? Infinity : bounds[2] === undefined ? Number(bounds[1]) : bounds[3] === "" ? Infinity : Number(bounds[3]);
        if (closed && closed.quantified && most > 1) return true;
        groups[groups.length - 1].quantified = true;
        if (bounds) index += bounds[0].length - 1;
        closed = null;
      } else if (character === "?") {
        groups[groups.length - 1].quantified = true;
        closed = null;
      } else {
        closed = null;
      }
    }
    return false;
  }

  /** One worker that runs patterns, one at a time, each with a deadline. */
  class PatternWorker {
    static async create() {
      if (typeof Worker !== "function" || typeof Blob !== "function" || typeof URL.createObjectURL !== "function") return null;
      let url = null;
      let worker = null;
      try {
        url = URL.createObjectURL(new Blob([PATTERN_WORKER_SOURCE], { type: "text/javascript" }));
        worker = new Worker(url);
      } catch {
        if (url) URL.revokeObjectURL(url);
        return null;
      }
      const ready = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), LIMITS.patternWorkerStartMs);
        worker.onmessage = (message) => {
          clearTimeout(timer);
          resolve(isRecord(message.data) && message.data.ready === true);
        };
        worker.onerror = () => {
          clearTimeout(timer);
          resolve(false);
        };
      });
      URL.revokeObjectURL(url);
      if (!ready) {
        worker.terminate();
        return null;
      }
      return new PatternWorker(worker);
    }

    constructor(worker) {
      this.worker = worker;
      this.nextId = 0;
      this.alive = true;
    }

    /** Whether `pattern` finds a match in `version` within the budget; false when the worker had to be stopped. */
    run(pattern, version) {
      const id = (this.nextId += 1);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          this.terminate();
          resolve(false);
        }, LIMITS.patternWorkerMs);
        this.worker.onmessage = (message) => {
          if (!isRecord(message.data) || message.data.id !== id) return;
          clearTimeout(timer);
          resolve(message.data.matched === true && message.data.elapsed <= LIMITS.patternBudgetMs);
        };
        this.worker.postMessage({ id, pattern, version });
      });
    }

    terminate() {
      this.alive = false;
      this.worker.terminate();
    }
  }

  /** App version regex results per pattern and version, computed ahead of the triggers that read them. */
  class VersionPatterns {
    constructor() {
      this.results = new Map();
      this.worker = null;
      this.noWorker = false;
      this.chain = Promise.resolve();
      this.closed = false;
    }

    static key(pattern, version) {
      return `${pattern}\u0000${version}`;
    }

    /** Known results only: a pattern not evaluated yet does not match. */
    matches(pattern, version) {
      return this.results.get(VersionPatterns.key(pattern, version)) === true;
    }

    /** Evaluates the pairs not known yet, one after another, after any evaluation already under way. */
    evaluate(pairs) {
      const run = this.chain.then(() => this.evaluatePairs(pairs));
      this.chain = run.catch(() => undefined);
      return run;
    }

    async evaluatePairs(pairs) {
      for (const [pattern, version] of pairs) {
        const key = VersionPatterns.key(pattern, version);
        if (this.closed || this.results.has(key)) continue;
        const matched = await this.evaluateOne(pattern, version);
        this.results.set(key, matched);
        if (this.results.size > LIMITS.patternResults) this.results.delete(this.results.keys().next().value);
      }
    }

    async evaluateOne(pattern, version) {
      if (pattern.length > LIMITS.patternLength || version.length > LIMITS.versionLength) return false;
      try {
        new RegExp(pattern); // eslint-disable-line no-new -- compiling is bounded; only matching can run away
      } catch {
        return false;
      }
      const worker = await this.readyWorker();
      if (worker) return worker.run(pattern, version);
      if (canBacktrackWithoutEnd(pattern)) return false;
      const started = performance.now();
      return new RegExp(pattern).test(version) && performance.now() - started <= LIMITS.patternBudgetMs;
    }

    async readyWorker() {
      if (this.noWorker) return null;
      if (this.worker && this.worker.alive) return this.worker;
      this.worker = await PatternWorker.create();
      if (!this.worker) this.noWorker = true;
      if (this.closed && this.worker) this.worker.terminate();
      return this.worker;
    }

    close() {
      this.closed = true;
      if (this.worker && this.worker.alive) this.worker.terminate();
    }
  }

  // ---- Retries ----------------------------------------------------------------------------------

  /** Waits after failures: 1 s, 2 s, 4 s … at most 5 minutes, each ±20 %, never sooner than the server's Retry-After. */
  class Backoff {
    constructor(random) {
      this.random = random;
      this.failures = 0;
      this.retryAt = -Infinity;
    }

    ready(now) {
      return now >= this.retryAt;
    }

    failed(now, retryAfterMs) {
      const nominal = Math.min(LIMITS.backoffSeconds, 2 ** Math.min(this.failures, 30)) * 1000;
      const jittered = nominal * (1 + (this.random() * 2 - 1) * LIMITS.jitter);
      this.failures += 1;
      this.retryAt = now + Math.max(jittered, retryAfterMs);
      return this.retryAt;
    }

    succeeded() {
      this.failures = 0;
      this.retryAt = -Infinity;
    }
  }

  /** Retry-After in milliseconds from `now`: delay-seconds or an HTTP date; 0 when absent or unreadable. */
  function retryAfterMs(response, now) {
    const value = (response.headers && response.headers.get("Retry-After") || "").trim();
    if (/^\d{1,9}$/.test(value)) return Number(value) * 1000;
    const date = Date.parse(value);
    return Number.isFinite(date) ? Math.max(0, date - now) : 0;
  }

  const transient = (status) => status === 408 || status === 429 || status >= 500;
  const refusesKey = (status) => status === 401 || status === 403;

  // ---- Push payloads (docs/delivery-semantics.md §4) ----------------------------------------------

  /** The push campaign's id in a notification's data: a whole number from 1 to 2^53 − 1, or one written in
   *  decimal digits (FCM data carries only strings); null for anything else. */
  function pushCampaignId(userInfo) {
    const raw = isRecord(userInfo) ? userInfo.herald_campaign_id : undefined;
    const number = typeof raw === "string" && /^\d{1,20}$/.test(raw) ? Number(raw) : raw;
    return typeof number === "number" && Number.isSafeInteger(number) && number >= 1 ? number : null;
  }

  /** Whether a push asks for a refresh: APNs `aps.content-available` 1, or the data key `herald_refresh` "1". */
  function silentPush(userInfo) {
    if (!isRecord(userInfo)) return false;
    const available = isRecord(userInfo.aps) ? userInfo.aps["content-available"] : undefined;
    return available === 1 || available === "1" || userInfo.herald_refresh === "1";
  }

  /** A request that gives up after LIMITS.requestMs, so a silent network cannot hold the client. */
  async function send(fetchFunction, url, init) {
    const controller = typeof AbortController === "function" ? new AbortController() : null;
    const timer = setTimeout(() => controller && controller.abort(), LIMITS.requestMs);
    try {
      return await fetchFunction(url, controller ? { ...init, signal: controller.signal } : init);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Splits events into request bodies of at most LIMITS.batch events and `maxBytes` UTF-8 bytes. */
  /** Beacon bodies of at most `maxBytes`: the events in batches, the discard counts in the first (they are few and small). */
  function bodiesOf(events, discards, maxBytes) {
    const bodies = [];
    let batch = [];
    const first = discards.length > 0 ? { discards } : {};
    let bytes = discards.length > 0 ? utf8.encode(JSON.stringify(first)).length : 0;
    const wrapper = utf8.encode('{"events":[]}').length;
    const body = (events) => JSON.stringify(bodies.length === 0 ? { events, ...first } : { events });
    for (const event of events) {
      const size = utf8.encode(JSON.stringify(event)).length + 1;
      if (wrapper + size > maxBytes) continue; // cannot go this way at all; the next fetch upload takes it
      if (batch.length === LIMITS.batch || wrapper + bytes + size > maxBytes) {
        bodies.push(body(batch));
        batch = [];
        bytes = 0;
      }
      batch.push(event);
      bytes += size;
    }
    if (batch.length > 0 || (bodies.length === 0 && discards.length > 0)) bodies.push(body(batch));
    return bodies;
  }

  // ---- The built-in renderer: the six layouts in a shadow root ----------------------------------

  // The console's preview (Public/css/preview.css) in CSS pixels: a message on the web has the
  // proportions and colors marketers saw. Per-message colors arrive as custom properties.
  const MESSAGE_STYLES = `
:host { all: initial; display: block; position: fixed; inset: 0; z-index: 2147483000; pointer-events: none;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans Arabic", "Noto Sans Hebrew",
    "Vazirmatn", "DejaVu Sans", "Liberation Sans", sans-serif, "Apple Color Emoji", "Segoe UI Emoji", "Noto Color Emoji";
  font-size: 15px; line-height: 1.35; color: #000000; -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
*, *::before, *::after { box-sizing: border-box; }
.layer { position: absolute; inset: 0; }
.dimmed { display: flex; align-items: center; justify-content: center; pointer-events: auto;
  padding: calc(env(safe-area-inset-top, 0px) + 16px) calc(env(safe-area-inset-right, 0px) + 24px)
    calc(env(safe-area-inset-bottom, 0px) + 16px) calc(env(safe-area-inset-left, 0px) + 24px);
  background: rgb(0 0 0 / 0.5); animation: herald-fade 0.2s ease-out; }
.message { position: relative; min-width: 0; text-align: start; pointer-events: auto; }
/* A dialog takes focus so a screen reader reads it; the buttons inside show where the keyboard is. */
.message:focus { outline: none; }
.surface { background-color: var(--surface, #ffffff); }
.title { margin: 0; color: var(--title, #000000); font-size: 18px; font-weight: 700; line-height: 1.25; overflow-wrap: anywhere; }
.body { margin: 0; color: var(--body, #000000); font-size: 15px; white-space: pre-line; overflow-wrap: anywhere; }
.text { min-width: 0; min-height: 0; display: flex; flex-direction: column; gap: 6px; }
.media { position: relative; flex: none; min-width: 0; overflow: hidden; }
.media img { position: absolute; inset: 0; width: 100%; height: 100%; object-fit: contain; }
.buttons { display: flex; align-items: center; gap: 8px; min-width: 0; flex: none; }
button { appearance: none; margin: 0; font: inherit; color: inherit; cursor: pointer; -webkit-tap-highlight-color: transparent; }
.button { flex: 0 1 auto; min-width: 0; max-width: 100%; min-height: 40px; padding: 0 16px; border: 0; border-radius: 6px;
  font-size: 15px; font-weight: 600; line-height: 40px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.primary { background-color: var(--primary-background, #1a73e8); color: var(--primary-text, #ffffff); margin-inline-start: auto; }
.secondary { background-color: var(--secondary-background, #ffffff); color: var(--secondary-text, #1a73e8); }
.close { position: absolute; z-index: 1; display: flex; align-items: center; justify-content: center;
  width: 30px; height: 30px; padding: 0; border: 2px solid #ffffff; border-radius: 50%;
  background: rgb(32 33 36 / 0.75); color: #ffffff; font-size: 18px; font-weight: 600; line-height: 1; }
.tap { display: flex; align-items: inherit; gap: inherit; flex: 1 1 auto; min-width: 0; padding: 0; border: 0;
  background: none; text-align: inherit; }
button:focus-visible { outline: 3px solid #174ea6; outline-offset: 2px; box-shadow: 0 0 0 2px #ffffff; }
.banner .title, .banner .body, .slideup .body, .card .title, .modal .title, .fullscreen .title {
  display: -webkit-box; -webkit-box-orient: vertical; overflow: hidden; }
.card .title, .modal .title, .fullscreen .title { -webkit-line-clamp: 3; line-clamp: 3; flex: none; }
.banner .title { -webkit-line-clamp: 1; line-clamp: 1; }
.banner .body { -webkit-line-clamp: 2; line-clamp: 2; }
.slideup .body { -webkit-line-clamp: 3; line-clamp: 3; }

.card { display: flex; flex-direction: column; width: min(100%, 400px); max-height: 100%; border-radius: 10px; overflow: hidden;
  box-shadow: 0 6px 24px rgb(0 0 0 / 0.35); }
.card .media { aspect-ratio: 3 / 2; flex: 0 1 auto; min-height: 80px; }
.card .content, .modal .content, .fullscreen .content { flex: 1 1 auto; min-height: 0; min-width: 0; display: flex;
  flex-direction: column; gap: 14px; }
.card .content { padding: 16px; }
.card .text, .modal .text, .fullscreen .text { flex: 0 1 auto; }
.card .body, .modal .body, .fullscreen .body { min-height: 20px; overflow-y: auto; }

.modal { display: flex; flex-direction: column; gap: 14px; width: min(100%, 420px); max-height: 100%;
  padding: 28px 20px 20px; border-radius: 10px; box-shadow: 0 6px 24px rgb(0 0 0 / 0.35); }
.modal .media { aspect-ratio: 3 / 2; max-height: 38vh; flex: 0 1 auto; min-height: 60px; }
.modal .title, .modal .body { text-align: center; }
.modal .buttons { justify-content: center; }
.modal .primary { margin-inline-start: 0; }
.modal .close, .image-only .close { top: -12px; inset-inline-end: -12px; }

@media (orientation: landscape) {
  .card { flex-direction: row; width: min(100%, 680px); }
  .card .media { aspect-ratio: 1 / 1; flex: 0 0 44%; min-height: 0; max-height: calc(100vh - 32px); }
  .card .content { flex: 1 1 0; justify-content: space-between; }
  .modal.with-image { flex-direction: row; align-items: center; width: min(100%, 640px); padding: 20px; }
  .modal.with-image .media { max-height: 100%; flex: 0 0 42%; min-height: 0; }
  .modal.with-image .content { align-self: stretch; justify-content: center; }
}

.image-only { display: flex; max-width: 100%; max-height: 100%; }
.image-only .media { overflow: visible; }
.image-only img { position: static; display: block; width: auto; height: auto;
  max-width: min(calc(100vw - 48px), 480px); max-height: min(calc(100vh - 32px), 640px); border-radius: 4px; }
.image-only .tap, .image-only .static { display: block; border-radius: 4px; }

.banner { position: absolute; top: 0; inset-inline: 0; display: flex; align-items: flex-start; gap: 12px;
  padding: calc(env(safe-area-inset-top, 0px) + 10px) max(16px, calc((100% - 760px) / 2)) 12px;
  box-shadow: 0 2px 10px rgb(0 0 0 / 0.3); animation: herald-from-top 0.25s ease-out; }
.banner .tap, .banner .static { display: flex; align-items: flex-start; gap: 12px; flex: 1 1 auto; min-width: 0; }
.banner .media { width: 56px; height: 56px; border-radius: 4px; }
.banner .text { flex: 1 1 auto; gap: 2px; }
.banner .title { font-size: 16px; }
.banner .body { font-size: 14px; }

.slideup { position: absolute; inset-inline: 12px; margin-inline: auto; max-width: 460px; display: flex; align-items: center;
  gap: 12px; padding: 12px 14px; border-radius: 12px; box-shadow: 0 4px 16px rgb(0 0 0 / 0.28); }
.slideup .tap, .slideup .static { display: flex; align-items: center; gap: 12px; flex: 1 1 auto; min-width: 0; }
.edge-bottom { bottom: calc(env(safe-area-inset-bottom, 0px) + 12px); animation: herald-from-bottom 0.25s ease-out; }
.edge-top { top: calc(env(safe-area-inset-top, 0px) + 8px); animation: herald-from-top 0.25s ease-out; }
.slideup .media { width: 50px; height: 50px; border-radius: 8px; }
.slideup .text { flex: 1 1 auto; }
.slideup .body { font-size: 14px; color: var(--body, #333333); }
.chevron { flex: none; width: 9px; height: 9px; margin-inline: 2px 4px; border-top: 2px solid #8e8e93;
  border-right: 2px solid #8e8e93; transform: rotate(45deg); }
.message[dir="rtl"] .chevron { transform: rotate(-135deg); }
.banner .close, .slideup .close { position: static; flex: none; width: 32px; height: 32px; margin: -4px; border: 0;
  background: transparent; color: var(--title, #5f6368); font-size: 22px; font-weight: 400; opacity: 0.75; }
.slideup .close { color: var(--body, #5f6368); }
.banner .close:hover, .slideup .close:hover { opacity: 1; }

.dimmed.full { padding: 0; }
.fullscreen { display: flex; flex-direction: column; overflow: hidden; position: absolute; inset: 0; }
.fullscreen .media { flex: 0 0 50%; }
.fullscreen .media img { object-fit: cover; }
.fullscreen .content { justify-content: space-between;
  padding: 20px calc(env(safe-area-inset-right, 0px) + 24px) calc(env(safe-area-inset-bottom, 0px) + 12px) calc(env(safe-area-inset-left, 0px) + 24px); }
.fullscreen .title { font-size: 22px; text-align: center; }
.fullscreen .body { font-size: 16px; text-align: center; }
.fullscreen .button { flex: 1 1 0; margin-inline-start: 0; min-height: 44px; line-height: 44px; }
.fullscreen .close { top: calc(env(safe-area-inset-top, 0px) + 10px); inset-inline-end: calc(env(safe-area-inset-right, 0px) + 14px); }
@media (orientation: landscape) and (max-height: 599px) {
  .fullscreen .content { padding-top: 12px; gap: 8px; }
}
@media (min-width: 600px) and (min-height: 600px) {
  .dimmed.full { padding: 24px; }
  .fullscreen { position: relative; inset: auto; width: min(100%, 560px); height: min(100%, 780px); border-radius: 16px;
    box-shadow: 0 6px 24px rgb(0 0 0 / 0.35); }
  .fullscreen .content { padding: 20px 24px; }
  .fullscreen .close { top: 12px; inset-inline-end: 12px; }
}
@media (min-width: 600px) and (min-height: 600px) and (orientation: landscape) {
  .fullscreen { width: min(100%, 780px); height: min(100%, 600px); }
}

@keyframes herald-fade { from { opacity: 0; } }
@keyframes herald-from-top { from { transform: translateY(-100%); opacity: 0; } }
@keyframes herald-from-bottom { from { transform: translateY(100%); opacity: 0; } }
@media (prefers-reduced-motion: reduce) { *, *::before, *::after { animation: none !important; transition: none !important; } }
`;

  // The words the renderer itself adds (the message's words are the campaign's), in the console's languages.
  const RENDERER_WORDS = {
    en: { close: "Close", message: "Message", open: "Open" },
    de: { close: "Schließen", message: "Nachricht", open: "Öffnen" },
    fa: { close: "بستن", message: "پیام", open: "باز کردن" },
    ar: { close: "إغلاق", message: "رسالة", open: "فتح" },
    ja: { close: "閉じる", message: "メッセージ", open: "開く" },
  };

  function rendererWords(language, overrides) {
    const tags = languageFallbacks(language);
    const base = RENDERER_WORDS[tags[tags.length - 1]] || RENDERER_WORDS.en;
    return { ...base, ...(isRecord(overrides) ? overrides : {}) };
  }

  /** `#RRGGBB` or `#AARRGGBB` (alpha first, as Herald stores them) as CSS, or null for anything else. */
  function cssColor(value) {
    const match = typeof value === "string" ? /^#([0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$/.exec(value) : null;
    if (!match) return null;
    const hex = match[1];
    const alpha = hex.length === 8 ? parseInt(hex.slice(0, 2), 16) / 255 : 1;
    const rgb = hex.slice(-6);
    const channel = (at) => parseInt(rgb.slice(at, at + 2), 16);
    return `rgba(${channel(0)}, ${channel(2)}, ${channel(4)}, ${Math.round(alpha * 1000) / 1000})`;
  }

  const orientationOfViewport = () => (globalThis.innerWidth > globalThis.innerHeight ? "landscape" : "portrait");

  /** Builds an element: `attributes` are set as attributes (never HTML), `children` are nodes or text. */
  function make(document, tag, attributes, children) {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value !== null && value !== undefined && value !== false) element.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children || []) {
      if (child !== null && child !== undefined) element.append(child);
    }
    return element;
  }

  /** One message on the page: built, shown, reported on, and taken away. */
  class MessageView {
    constructor(shown, report, settings) {
      this.shown = shown;
      this.report = report;
      this.document = settings.document;
      this.container = settings.container;
      this.words = rendererWords(shown.language || settings.language, settings.words);
      this.styleNonce = settings.styleNonce;
      this.cleanups = [];
      this.ended = false;
      this.autoDismiss = null;
    }

    get message() {
      return this.shown.message;
    }

    mount() {
      const document = this.document;
      const layout = this.message.layout;
      this.host = make(document, "div", {
        "data-herald-message": this.shown.local ? "local" : String(this.shown.campaignId),
        "data-layout": layout,
      });
      const root = this.host.attachShadow({ mode: "open" });
      this.root = root;
      this.adoptStyles(root);
      this.element = this.build(layout);
      const dialog = ["card", "modal", "image_only", "fullscreen"].includes(layout);
      this.layer = make(document, "div", { class: dialog ? `layer dimmed${layout === "fullscreen" ? " full" : ""}` : "layer" });
      root.append(this.layer);
      this.returnFocusTo = dialog ? document.activeElement : null;
      (this.container() || document.body).append(this.host);
      if (dialog) {
        this.layer.append(this.element);
        this.trapFocus();
        this.element.focus({ preventScroll: true });
      } else {
        // A live region announces what is added to it after it is on the page, not what it came with.
        const content = [...this.element.childNodes];
        this.layer.append(this.element);
        requestAnimationFrame(() => this.element.append(...content));
        this.element.replaceChildren();
      }
      this.lockOrientation();
      this.whenDrawn(() => {
        this.report.impression(this.host);
        if (layout === "banner" || layout === "slideup") this.startAutoDismiss();
      });
    }

    adoptStyles(root) {
      const document = this.document;
      if (typeof CSSStyleSheet === "function" && "adoptedStyleSheets" in root) {
        if (!MessageView.sheet) {
          MessageView.sheet = new CSSStyleSheet();
          MessageView.sheet.replaceSync(MESSAGE_STYLES);
        }
        root.adoptedStyleSheets = [MessageView.sheet];
      } else {
        root.append(make(document, "style", { nonce: this.styleNonce }, [MESSAGE_STYLES]));
      }
    }

    build(layout) {
      const message = this.message;
      const title = nonBlank(message.title && message.title.text) && layout !== "image_only" && layout !== "slideup" ? message.title.text : null;
      const body = nonBlank(message.body && message.body.text) && layout !== "image_only" ? message.body.text : null;
      const buttons = this.buttons(layout);
      const texts = [title, body, ...buttons.map((button) => button.textContent)].filter((text) => text !== null);
      const direction = this.shown.language ? (isRightToLeftLanguage(this.shown.language) ? "rtl" : "ltr") : textDirection(texts);
      const attributes = { dir: direction, lang: this.shown.language || "", "data-layout": layout };
      const titleElement = title === null ? null : make(this.document, "h2", { class: "title", id: "herald-title", dir: "auto" }, [title]);
      const bodyElement = body === null ? null : make(this.document, "p", { class: "body", id: "herald-body", dir: "auto" }, [body]);
      const text = titleElement || bodyElement ? make(this.document, "div", { class: "text" }, [titleElement, bodyElement]) : null;
      const buttonRow = buttons.length > 0 ? make(this.document, "div", { class: "buttons" }, buttons) : null;
      let element;
      switch (layout) {
        case "card":
          element = this.dialog("card surface", attributes, titleElement, bodyElement, [
            this.media(),
            make(this.document, "div", { class: "content" }, [text, buttonRow]),
          ]);
          break;
        case "modal": {
          const media = this.media();
          element = this.dialog(`modal surface${media ? " with-image" : ""}`, attributes, titleElement, bodyElement, [
            this.closeButton(),
            media,
            make(this.document, "div", { class: "content" }, [text, buttonRow]),
          ]);
          this.dismissOnBackdrop();
          break;
        }
        case "image_only":
          element = this.dialog("image-only", attributes, null, null, [
            this.tappable(make(this.document, "div", { class: "static" }, [this.media()])),
            this.closeButton(),
          ]);
          this.dismissOnBackdrop();
          break;
        case "fullscreen":
          element = this.dialog("fullscreen surface", attributes, titleElement, bodyElement, [
            this.media(),
            make(this.document, "div", { class: "content" }, [text, buttonRow]),
            this.closeButton(),
          ]);
          break;
        case "banner":
          element = this.strip("banner surface", attributes, [this.media(), text]);
          break;
        default: {
          const edge = message.slideFrom === "top" ? "top" : "bottom";
          const chevron = this.tapUrl() ? make(this.document, "span", { class: "chevron", "aria-hidden": "true" }) : null;
          element = this.strip(`slideup surface edge-${edge}`, { ...attributes, "data-edge": edge }, [this.media(), text, chevron]);
        }
      }
      this.paint(element);
      return element;
    }

    dialog(classes, attributes, title, body, children) {
      return make(this.document, "div", {
        ...attributes,
        class: `message ${classes}`,
        role: "dialog",
        "aria-modal": "true",
        "aria-labelledby": title ? "herald-title" : null,
        "aria-label": title ? null : this.words.message,
        "aria-describedby": body ? "herald-body" : null,
        tabindex: "-1",
      }, children);
    }

    /** Banners and slide-ups: announced politely, never taking focus; a close button; a swipe dismisses them. */
    strip(classes, attributes, children) {
      const element = make(this.document, "div", { ...attributes, class: `message ${classes}`, role: "status", "aria-live": "polite" }, [
        this.tappable(make(this.document, "div", { class: "static" }, children)),
        this.closeButton(),
      ]);
      this.dismissOnSwipe(element);
      return element;
    }

    tapUrl() {
      const action = this.message.action;
      return ["image_only", "banner", "slideup"].includes(this.message.layout) && isRecord(action) && nonBlank(action.url) ? action.url : null;
    }

    /** The message's body as one button when it has a tap action. */
    tappable(content) {
      const url = this.tapUrl();
      if (!url || !content) return content;
      const button = make(this.document, "button", { type: "button", class: "tap" }, [...content.childNodes]);
      if (this.message.layout === "image_only") button.setAttribute("aria-label", this.words.open);
      this.on(button, "click", () => this.click("body", url));
      return button;
    }

    media() {
      const message = this.message;
      if (!nonBlank(message.imageUrl)) return null;
      // Decorative beside a title; an image-only message is named by its button or its dialog.
      const image = make(this.document, "img", { src: message.imageUrl, alt: "", decoding: "async" });
      this.image = image;
      let picture = image;
      if (message.layout === "card" && nonBlank(message.landscapeImageUrl)) {
        picture = make(this.document, "picture", {}, [
          make(this.document, "source", { media: "(orientation: landscape)", srcset: message.landscapeImageUrl }),
          image,
        ]);
      }
      return make(this.document, "div", { class: "media" }, [picture]);
    }

    buttons(layout) {
      const message = this.message;
      const buttons = [];
      const add = (role, button) => {
        if (!isRecord(button) || !nonBlank(button.text)) return;
        const element = make(this.document, "button", { type: "button", class: `button ${role}`, dir: "auto", "data-button": role }, [button.text]);
        this.on(element, "click", () => (nonBlank(button.url) ? this.click(role, button.url) : this.dismiss("click")));
        buttons.push(element);
      };
      if (layout === "card" || layout === "fullscreen") add("secondary", message.secondaryAction);
      if (layout === "card" || layout === "modal" || layout === "fullscreen") add("primary", message.primaryAction);
      return buttons;
    }

    closeButton() {
      const button = make(this.document, "button", { type: "button", class: "close", "aria-label": this.words.close, title: this.words.close, "data-close": "" },
        [make(this.document, "span", { "aria-hidden": "true" }, ["×"])]);
      this.on(button, "click", () => this.dismiss("click"));
      return button;
    }

    /** The message's colors; a part without a valid color keeps the default. */
    paint(element) {
      const message = this.message;
      const set = (property, color) => {
        const css = cssColor(color);
        if (css) element.style.setProperty(property, css);
      };
      set("--surface", message.backgroundColor);
      set("--title", message.title && message.title.color);
      set("--body", message.body && message.body.color);
      for (const role of ["primary", "secondary"]) {
        const button = message[`${role}Action`];
        if (!isRecord(button)) continue;
        set(`--${role}-background`, button.buttonColor);
        set(`--${role}-text`, button.textColor);
      }
    }

    on(target, type, listener, options) {
      target.addEventListener(type, listener, options);
      this.cleanups.push(() => target.removeEventListener(type, listener, options));
    }

    dismissOnBackdrop() {
      queueMicrotask(() => this.on(this.layer, "click", (event) => {
        if (event.target === this.layer) this.dismiss("click");
      }));
    }

    dismissOnSwipe(element) {
      let startY = null;
      const towardsEdge = () => (this.message.layout === "slideup" && this.message.slideFrom !== "top" ? 1 : -1);
      this.on(element, "pointerdown", (event) => {
        startY = event.clientY;
      });
      this.on(element, "pointermove", (event) => {
        if (startY === null) return;
        const distance = (event.clientY - startY) * towardsEdge();
        element.style.transform = distance > 0 ? `translateY(${(distance * towardsEdge()).toFixed(1)}px)` : "";
        if (distance > 40) {
          startY = null;
          this.dismiss("swipe");
        }
      });
      const cancel = () => {
        startY = null;
        element.style.transform = "";
      };
      this.on(element, "pointerup", cancel);
      this.on(element, "pointercancel", cancel);
    }

    /** Tab and Shift-Tab stay inside a dialog; Escape dismisses it (the user closing it: type "click"). */
    trapFocus() {
      this.on(this.root, "keydown", (event) => {
        if (event.key === "Escape") {
          event.stopPropagation();
          this.dismiss("click");
          return;
        }
        if (event.key !== "Tab") return;
        const focusable = [...this.element.querySelectorAll("button")].filter((button) => button.getClientRects().length > 0);
        if (focusable.length === 0) {
          event.preventDefault();
          return;
        }
        const first = focusable[0];
        const last = focusable[focusable.length - 1];
        const active = this.root.activeElement;
        if (event.shiftKey && (active === first || active === this.element)) {
          event.preventDefault();
          last.focus();
        } else if (!event.shiftKey && active === last) {
          event.preventDefault();
          first.focus();
        }
      });
      // Focus that leaves for the page behind (a screen reader's jump, a script) comes back.
      this.on(this.document, "focusin", (event) => {
        if (event.target !== this.host && !this.ended) this.element.focus({ preventScroll: true });
      });
    }

    /** After the image is loaded and a frame is drawn: that is when the user can see it. */
    whenDrawn(drawn) {
      const image = this.image;
      const afterFrame = () => requestAnimationFrame(() => requestAnimationFrame(() => {
        if (!this.ended) drawn();
      }));
      if (!image) {
        afterFrame();
        return;
      }
      // decode() settles whether the image loaded before this call or after; it fails for one that cannot be shown.
      image.decode().then(afterFrame, () => {
        if (!this.ended) this.fail("image_display");
      });
    }

    startAutoDismiss() {
      const layoutDefault = this.message.layout === "banner" ? 12 : 8;
      const seconds = isRecord(this.message.dismiss) ? finiteOr(this.message.dismiss.seconds, layoutDefault) : layoutDefault;
      let remaining = Math.min(120, Math.max(1, seconds)) * 1000;
      let startedAt = 0;
      let timer = null;
      let holds = 0; // pointer over it, focus in it: the reader is not done
      const run = () => {
        startedAt = Date.now();
        timer = setTimeout(() => this.dismiss("auto"), remaining);
      };
      const pause = () => {
        holds += 1;
        if (timer === null) return;
        clearTimeout(timer);
        timer = null;
        remaining = Math.max(0, remaining - (Date.now() - startedAt));
      };
      const resume = () => {
        holds = Math.max(0, holds - 1);
        if (holds === 0 && timer === null && !this.ended) run();
      };
      this.on(this.element, "pointerenter", pause);
      this.on(this.element, "pointerleave", resume);
      this.on(this.element, "focusin", pause);
      this.on(this.element, "focusout", resume);
      run();
      this.cleanups.push(() => clearTimeout(timer));
    }

    lockOrientation() {
      const lock = this.message.layout === "fullscreen" ? this.message.orientation : null;
      const orientation = globalThis.screen && globalThis.screen.orientation;
      if ((lock !== "portrait" && lock !== "landscape") || !orientation || typeof orientation.lock !== "function") return;
      // Browsers lock only in fullscreen or installed apps; elsewhere the promise rejects and the check before showing is what holds.
      orientation.lock(lock).then(() => this.cleanups.push(() => orientation.unlock()), () => undefined);
    }

    click(action, url) {
      if (this.remove()) this.report.click(action, url);
    }

    dismiss(type) {
      if (this.remove()) this.report.dismiss(type);
    }

    fail(code) {
      if (this.remove()) this.report.error(code);
    }

    /** Takes the message off the page; false when it already was. */
    remove() {
      if (this.ended) return false;
      this.ended = true;
      for (const cleanup of this.cleanups.splice(0)) cleanup();
      this.host.remove();
      const previous = this.returnFocusTo;
      if (previous && previous.isConnected && typeof previous.focus === "function") previous.focus({ preventScroll: true });
      return true;
    }
  }

  /** The renderer Herald.start registers unless the app gives its own: each message in a shadow root on the page. */
  function pageRenderer(settings) {
    const views = new Map();
    return {
      display(shown, report) {
        const view = new MessageView(shown, {
          impression: (element) => report.impression(element),
          click: (action, url) => {
            views.delete(shown);
            report.click(action, url);
          },
          dismiss: (type) => {
            views.delete(shown);
            report.dismiss(type);
          },
          error: (code) => {
            views.delete(shown);
            report.error(code);
          },
        }, settings);
        views.set(shown, view);
        view.mount();
      },
      withdraw(shown) {
        const view = views.get(shown);
        views.delete(shown);
        if (view) view.remove();
      },
    };
  }

  // ---- The client -------------------------------------------------------------------------------

  function readState(stored) {
    const state = isRecord(stored) ? stored : {};
    return {
      installationId: typeof state.installationId === "string" && state.installationId !== "" ? state.installationId : null,
      firstOpen: finiteOr(state.firstOpen, null),
      dataCollection: typeof state.dataCollection === "boolean" ? state.dataCollection : null,
      lastDisplay: finiteOr(state.lastDisplay, null),
      impressions: isRecord(state.impressions) ? state.impressions : {},
      backgroundAt: finiteOr(state.backgroundAt, null),
    };
  }

  const DAY_TEXT = /^\d{4}-\d{2}-\d{2}$/;

  /** The discard counts waiting (docs/delivery-semantics.md §7), each as kept: what it counts, whether data
   *  collection was on when it started, and whether an upload took it (then its count is fixed). */
  function readDiscards(stored) {
    const discards = Array.isArray(stored) ? stored : [];
    return discards.filter((entry) => isRecord(entry) && typeof entry.id === "string" && Number.isSafeInteger(entry.campaignId)
      && DISCARD_REASONS.includes(entry.reason) && typeof entry.day === "string" && DAY_TEXT.test(entry.day)
      && Number.isSafeInteger(entry.count) && entry.count >= 1 && entry.count <= LIMITS.discardCount)
      .map((entry) => ({ ...entry, identified: entry.identified === true, sent: entry.sent === true }))
      .slice(-LIMITS.discardCounts);
  }

  function readQueue(stored) {
    const queue = isRecord(stored) ? stored : {};
    return {
      events: Array.isArray(queue.events) ? queue.events.filter(isRecord).slice(-LIMITS.queue) : [],
      dropped: Math.max(0, finiteOr(queue.dropped, 0)),
    };
  }

  const entryKey = (entry) => (entry.local ? `local:${entry.localId}` : `campaign:${entry.campaign.id}`);
  const entryId = (entry) => (entry.local ? "local" : entry.campaign.id);

  /**
   * One client: the feed, the stack, the slot, sessions and the event queue of docs/delivery-semantics.md.
   * Time is read from `settings.clock` at every step, and every time rule is checked whenever the client is
   * asked something, so an injected clock behaves as the wall clock does.
   */
  class Client {
    constructor(settings) {
      this.settings = settings;
      this.clock = settings.clock;
      this.delegate = settings.delegate;
      this.device = {
        appVersion: settings.appVersion,
        language: settings.language,
        country: settings.country,
        userProperties: settings.userProperties,
      };
      this.store = new Store(settings.storage, settings.namespace, (error) => callDelegate(this.delegate, "storageFailed", error));
      this.patterns = new VersionPatterns();
      this.feed = readFeed('{"campaigns": []}');
      this.feedText = null;
      this.etag = null;
      this.stack = []; // bottom first
      this.slot = null;
      this.inForeground = true;
      this.suppressed = false;
      this.renderer = null;
      this.discards = Object.fromEntries(DISCARD_REASONS.map((reason) => [reason, 0]));
      this.droppedDiscards = 0;
      this.images = new Map();
      this.feedBackoff = new Backoff(settings.random || Math.random);
      this.uploadBackoff = new Backoff(settings.random || Math.random);
      this.nextPollAt = -Infinity;
      this.refreshing = null;
      this.uploading = null;
      this.stoppedStatus = null;
      this.ended = false;
      this.lastShown = null;
      this.slots = new WeakMap(); // shown message → its display, for conversions the app attributes later
      this.timers = new Map();
      this.cleanups = [];
      this.localMessages = 0;
      this.identity = null;
    }

    // -- State kept across pages (localStorage) --

    /** What this device keeps; the installation's identity stays even if something else clears the storage meanwhile. */
    readState() {
      return this.withIdentity(readState(this.store.read("state")));
    }

    updateState(change) {
      return this.store.update("state", (stored) => {
        const state = this.withIdentity(readState(stored));
        change(state);
        return state;
      });
    }

    withIdentity(state) {
      if (this.identity) {
        if (state.installationId === null) state.installationId = this.identity.installationId;
        if (state.firstOpen === null) state.firstOpen = this.identity.firstOpen;
      }
      return state;
    }

    get dataCollection() {
      return this.readState().dataCollection !== false;
    }

    async open() {
      const now = this.clock();
      const state = this.updateState((kept) => {
        if (this.settings.installationId) kept.installationId = this.settings.installationId;
        if (kept.installationId === null) kept.installationId = uuidV4(this.settings.random);
        if (kept.firstOpen === null) kept.firstOpen = this.settings.firstOpen ?? now;
        if (kept.dataCollection === null) kept.dataCollection = this.settings.dataCollection;
      });
      this.identity = { installationId: state.installationId, firstOpen: state.firstOpen };
      const cached = this.store.read("feed");
      if (isRecord(cached) && typeof cached.body === "string") {
        try {
          await this.adopt(cached.body, typeof cached.etag === "string" ? cached.etag : null);
        } catch {
          // A stored feed this client cannot read: the server's comes next.
        }
      }
      await this.refresh();
    }

    // -- The feed --

    refresh() {
      if (this.ended || this.stoppedStatus !== null) return Promise.resolve(false);
      if (!this.refreshing) {
        this.refreshing = this.fetchFeed().finally(() => {
          this.refreshing = null;
        });
      }
      return this.refreshing;
    }

    async fetchFeed() {
      const state = this.readState();
      const headers = { Authorization: `Bearer ${this.settings.apiKey}`, Accept: "application/json" };
      if (this.etag) headers["If-None-Match"] = this.etag;
      if (state.dataCollection !== false) headers["X-Installation-Id"] = state.installationId;
      let response;
      try {
        response = await send(this.settings.fetch, `${this.settings.server}/api/v1/feed`,
          { method: "GET", headers, credentials: "omit", cache: "no-store" });
      } catch {
        return this.feedFailed(0);
      }
      if (this.ended) return false;
      if (refusesKey(response.status)) {
        this.halt(response.status);
        return false;
      }
      if (response.status === 304) return this.feedSucceeded();
      if (!response.ok) return this.feedFailed(retryAfterMs(response, this.clock()));
      try {
        const body = await response.text();
        const etag = response.headers.get("ETag");
        await this.adopt(body, etag);
        this.store.write("feed", { body, etag });
      } catch {
        return this.feedFailed(0);
      }
      return this.feedSucceeded();
    }

    feedSucceeded() {
      this.feedBackoff.succeeded();
      this.nextPollAt = this.clock() + this.feed.pollAfterSeconds * 1000;
      this.setTimer("poll", this.nextPollAt);
      return true;
    }

    feedFailed(retryAfter) {
      if (this.ended) return false;
      this.nextPollAt = this.feedBackoff.failed(this.clock(), retryAfter);
      this.setTimer("poll", this.nextPollAt);
      return false;
    }

    /** Takes a feed into use once its version patterns are known; a feed that differs from the last starts its images loading. */
    async adopt(body, etag) {
      const feed = readFeed(body);
      await this.patterns.evaluate(this.versionPairs(feed.campaigns));
      if (this.ended) return;
      const changed = body !== this.feedText;
      this.feed = feed;
      this.feedText = body;
      this.etag = etag || null;
      if (changed) {
        this.forgetImages();
        this.preload();
      }
    }

    versionPairs(campaigns) {
      return campaigns.filter((campaign) => isRecord(campaign.targeting.appVersion) && campaign.targeting.appVersion.op === "regex")
        .map((campaign) => [String(campaign.targeting.appVersion.value ?? ""), this.device.appVersion]);
    }

    /** 401 and 403: the key is refused. No more polling or uploading until the app starts a client again. */
    halt(status) {
      if (this.stoppedStatus !== null) return;
      this.stoppedStatus = status;
      this.clearTimer("poll");
      this.clearTimer("upload");
      callDelegate(this.delegate, "stopped", status);
    }

    // -- Images --

    imageState(url) {
      if (!fetchableImage(url)) return "fail";
      let image = this.images.get(url);
      if (!image) {
        image = { state: "loading" };
        this.images.set(url, image);
        this.boundImages();
        Promise.resolve()
          .then(() => this.settings.loadImage(url))
          .then((loaded) => loaded === true, () => false)
          .then((loaded) => {
            image.state = loaded ? "ok" : "fail";
            if (this.images.get(url) === image) this.imageSettled(url);
          });
      }
      return image.state;
    }

    boundImages() {
      for (const [url, image] of this.images) {
        if (this.images.size <= LIMITS.images) break;
        if (image.state !== "loading") this.images.delete(url);
      }
    }

    /** A new feed: failed images get another chance, and images no campaign or waiting message uses are forgotten. */
    forgetImages() {
      const used = new Set();
      const addMessage = (message) => {
        imagesOf(message).forEach((url) => used.add(url));
        if (isRecord(message.translations)) {
          for (const tag of Object.keys(message.translations)) imagesOf(messageVersion(message, tag).message).forEach((url) => used.add(url));
        }
      };
      this.feed.campaigns.forEach((campaign) => addMessage(campaign.message));
      [...this.stack, ...(this.slot ? [this.slot.entry] : [])].forEach((entry) => addMessage(entry.local ? entry.message : entry.campaign.message));
      for (const [url, image] of this.images) {
        if (image.state === "fail" || (image.state === "ok" && !used.has(url))) this.images.delete(url);
      }
    }

    /** Starts loading the images of every campaign this device may see (schedule not ended, targeting, frequency). */
    preload() {
      const now = this.clock();
      const state = this.readState();
      for (const campaign of this.feed.campaigns) {
        if (!campaign.test && campaign.end !== null && campaign.end <= now) continue;
        if (!targets(campaign, this.deviceNow(), this.targetingContext(now, state))) continue;
        if (!frequencyAllows(campaign, state.impressions[campaign.id], now)) continue;
        imagesOf(messageVersion(campaign.message, this.device.language).message).forEach((url) => this.imageState(url));
      }
    }

    imageSettled(url) {
      if (this.ended) return;
      const now = this.clock();
      this.expireSlot(now);
      const slot = this.slot;
      if (!slot || slot.phase !== "loading") return;
      const urls = imagesOf(slot.version.message);
      if (!urls.includes(url)) return;
      const states = urls.map((each) => (this.images.get(each) || { state: "loading" }).state);
      if (states.includes("loading") && !states.includes("fail")) return;
      this.freeSlot();
      if (states.includes("fail")) {
        this.discardForImage(slot.entry, slot.version, now);
      } else {
        this.decide(slot.entry, slot.version, now);
      }
    }

    // -- Choosing (§2) --

    deviceNow() {
      return { ...this.device, platform: this.settings.platform() };
    }

    targetingContext(now, state) {
      return {
        now,
        firstOpen: state.firstOpen ?? now,
        installationId: state.installationId,
        versionMatches: (pattern, version) => this.patterns.matches(pattern, version),
      };
    }

    eligible(campaign, now, state) {
      return this.ineligibility(campaign, now, state) === null;
    }

    /** Why the campaign cannot show now (`schedule`, `targeting` or `frequency`, the first that holds), or null. */
    ineligibility(campaign, now, state) {
      if (!scheduled(campaign, now)) return "schedule";
      if (!targets(campaign, this.deviceNow(), this.targetingContext(now, state))) return "targeting";
      if (!frequencyAllows(campaign, state.impressions[campaign.id], now)) return "frequency";
      return null;
    }

    insideInterval(now, state) {
      const seconds = this.settings.minimumIntervalSeconds ?? this.feed.minIntervalSeconds;
      return state.lastDisplay !== null && now - state.lastDisplay < seconds * 1000;
    }

    triggerEvent(name, properties) {
      if (typeof name !== "string" || name === "") throw new TypeError("triggerEvent needs an event name");
      if (this.ended) return { event: name, outcome: "stopped" };
      const now = this.clock();
      this.expireSlot(now);
      return this.fire(name, isRecord(properties) ? properties : {}, now);
    }

    fire(name, properties, now) {
      if (this.suppressed) return { event: name, outcome: "suppressed" };
      const state = this.readState();
      const fired = this.feed.campaigns.filter((campaign) => triggerFires(campaign, name, properties))
        .map((campaign) => ({ campaign, reason: this.ineligibility(campaign, now, state) }));
      const chosen = choose(fired.filter((each) => each.reason === null).map((each) => each.campaign));
      if (chosen === null) {
        callDelegate(this.delegate, "noMatchingTrigger", name);
        // Campaigns whose trigger fired but which cannot show now, and why: what a "why not?" needs.
        if (fired.length === 0) return { event: name, outcome: "noMatch" };
        return { event: name, outcome: "noMatch", passedOver: fired.map((each) => ({ campaign: each.campaign.id, reason: each.reason })) };
      }
      const entry = { local: false, campaign: chosen, trigger: name };
      if (this.slot || !this.inForeground || !this.renderer) {
        this.push(entry);
        return { event: name, outcome: "stacked", campaign: chosen.id };
      }
      if (!chosen.test && this.insideInterval(now, state)) {
        this.discard("throttled", entry, now);
        return { event: name, outcome: "throttled", campaign: chosen.id };
      }
      return { event: name, ...this.prepare(entry, now) };
    }

    /** Newest on top; a campaign waits there once; the bottom one drops past LIMITS.stack. */
    push(entry) {
      const key = entryKey(entry);
      this.stack = this.stack.filter((waiting) => entryKey(waiting) !== key);
      this.stack.push(entry);
      while (this.stack.length > LIMITS.stack) this.discard("stack_full", this.stack.shift(), this.clock());
    }

    /** A message chosen and not shown: counted in `discards`, and (a campaign's) for upload with the events, one
     *  count per campaign, reason and UTC day until an upload takes it. */
    discard(reason, entry, now) {
      this.discards[reason] += 1;
      if (entry.local) return;
      const identified = this.dataCollection;
      const day = new Date(now).toISOString().slice(0, 10);
      this.store.update("discards", (stored) => {
        const discards = readDiscards(stored);
        const open = discards.find((kept) => !kept.sent && kept.campaignId === entry.campaign.id && kept.reason === reason
          && kept.day === day && kept.identified === identified && kept.count < LIMITS.discardCount);
        if (open) {
          open.count += 1;
        } else {
          discards.push({ id: uuidV7(now, this.settings.random), campaignId: entry.campaign.id, reason, day, count: 1, identified, sent: false });
          while (discards.length > LIMITS.discardCounts) this.droppedDiscards += discards.shift().count;
        }
        return discards;
      });
      if (!this.timers.has("upload")) this.setTimer("upload", Math.max(now + LIMITS.uploadDelayMs, this.uploadBackoff.retryAt));
    }

    displayNext() {
      if (this.ended) return null;
      const now = this.clock();
      this.expireSlot(now);
      if (this.suppressed || !this.inForeground || this.slot || !this.renderer) return null;
      const state = this.readState();
      while (this.stack.length > 0) {
        const top = this.stack[this.stack.length - 1];
        if (!(top.local === false && top.campaign.test) && this.insideInterval(now, state)) return null;
        this.stack.pop();
        if (!top.local) {
          // The campaign as the feed has it now: one paused or ended since has left the feed.
          const campaign = this.feed.campaigns.find((each) => each.id === top.campaign.id);
          if (!campaign || !this.eligible(campaign, now, state)) {
            this.discard("ineligible", top, now);
            continue;
          }
          top.campaign = campaign;
        }
        return this.prepare(top, now);
      }
      return null;
    }

    // -- The display pipeline (§3) --

    /** Orientation, images, the app's decision, then the renderer; the language version is chosen now. */
    prepare(entry, now) {
      const version = messageVersion(entry.local ? entry.message : entry.campaign.message, this.device.language);
      const campaign = entryId(entry);
      const lock = version.message.layout === "fullscreen" ? version.message.orientation : null;
      if ((lock === "portrait" || lock === "landscape") && lock !== this.settings.orientation()) {
        this.discard("orientation", entry, now);
        return { outcome: "discarded", reason: "orientation", campaign };
      }
      const states = imagesOf(version.message).map((url) => this.imageState(url));
      if (states.includes("fail")) {
        this.discardForImage(entry, version, now);
        return { outcome: "discarded", reason: "image_fetch", campaign };
      }
      if (states.includes("loading")) {
        this.slot = { entry, version, phase: "loading", since: now };
        this.setTimer("slot", now + this.settings.displayTimeoutSeconds * 1000);
        return { outcome: "pending", campaign };
      }
      return this.decide(entry, version, now);
    }

    discardForImage(entry, version, now) {
      this.discard("image_fetch", entry, now);
      this.record(entry, version.language, "error", { errorCode: "image_fetch" }, now);
    }

    decide(entry, version, now) {
      const campaign = entryId(entry);
      if (!this.renderer || !this.inForeground) {
        this.push(entry);
        return { outcome: "stacked", campaign };
      }
      const shown = Object.freeze({
        campaignId: entry.local ? null : entry.campaign.id,
        local: entry.local,
        test: !entry.local && entry.campaign.test,
        trigger: entry.trigger,
        language: version.language,
        layout: version.message.layout,
        message: version.message,
        data: entry.local ? entry.data : entry.campaign.data,
      });
      const answer = callDelegate(this.delegate, "decide", shown);
      if (answer === "later") {
        this.push(entry);
        return { outcome: "stacked", campaign };
      }
      if (answer === "discard") {
        this.discard("delegate", entry, now);
        return { outcome: "discarded", reason: "delegate", campaign };
      }
      const slot = { entry, version, shown, phase: "shown", since: now, impressed: false };
      this.slot = slot;
      this.lastShown = slot;
      this.slots.set(shown, slot);
      this.updateState((state) => {
        state.lastDisplay = now;
      });
      this.setTimer("slot", now + this.settings.rendererTimeoutSeconds * 1000);
      try {
        this.renderer.display(shown, this.reporter(slot));
      } catch (error) {
        rethrowLater(error); // the renderer timeout frees the slot
      }
      return { outcome: "displayed", campaign };
    }

    /** Display and renderer timeouts: checked whenever the client is asked something. */
    expireSlot(now) {
      const slot = this.slot;
      if (!slot) return;
      if (slot.phase === "loading" && now - slot.since >= this.settings.displayTimeoutSeconds * 1000) {
        this.freeSlot();
        this.discard("timeout", slot.entry, now);
      } else if (slot.phase === "shown" && !slot.impressed && now - slot.since >= this.settings.rendererTimeoutSeconds * 1000) {
        this.freeSlot();
        this.discard("renderer_timeout", slot.entry, now);
        this.withdraw(slot);
      }
    }

    freeSlot() {
      this.slot = null;
      this.clearTimer("slot");
    }

    withdraw(slot) {
      if (slot.phase !== "shown" || !this.renderer || typeof this.renderer.withdraw !== "function") return;
      try {
        this.renderer.withdraw(slot.shown);
      } catch (error) {
        rethrowLater(error);
      }
    }

    /** What a renderer reports for one display; anything reported after the display ended is ignored. */
    reporter(slot) {
      const current = () => {
        if (this.ended) return null;
        const now = this.clock();
        this.expireSlot(now);
        return this.slot === slot ? now : null;
      };
      const end = (now, type, details) => {
        this.freeSlot();
        this.record(slot.entry, slot.version.language, type, details, now);
      };
      const oneOf = (value, allowed, what) => {
        if (!allowed.includes(value)) throw new TypeError(`${what} is one of ${allowed.join(", ")}`);
        return value;
      };
      return Object.freeze({
        impression: (element) => {
          const now = current();
          if (now === null || slot.impressed) return;
          slot.impressed = true;
          this.clearTimer("slot");
          if (!slot.entry.local) {
            this.updateState((state) => {
              state.impressions[slot.entry.campaign.id] = now;
              const ids = Object.keys(state.impressions);
              ids.sort((a, b) => state.impressions[a] - state.impressions[b]);
              ids.slice(0, Math.max(0, ids.length - LIMITS.impressionsKept)).forEach((id) => delete state.impressions[id]);
            });
          }
          this.record(slot.entry, slot.version.language, "impression", {}, now);
          callDelegate(this.delegate, "displayed", slot.shown, element);
        },
        click: (action, url) => {
          oneOf(action, CLICK_ACTIONS, "A click's action");
          const now = current();
          if (now === null) return;
          end(now, "click", { action, url: typeof url === "string" && url !== "" ? url : undefined });
          const proceed = callDelegate(this.delegate, "clicked", slot.shown, action, url);
          if (proceed !== false && typeof url === "string" && /^https:\/\//i.test(url)) this.settings.navigate(url);
        },
        dismiss: (type) => {
          oneOf(type, DISMISS_TYPES, "A dismissal's type");
          const now = current();
          if (now === null) return;
          end(now, "dismiss", { dismissType: type });
          callDelegate(this.delegate, "dismissed", slot.shown, type);
        },
        error: (code) => {
          oneOf(code, ERROR_CODES, "A display error's code");
          const now = current();
          if (now === null) return;
          end(now, "error", { errorCode: code });
          callDelegate(this.delegate, "displayError", slot.shown, code);
        },
      });
    }

    setRenderer(renderer) {
      if (renderer !== null && (typeof renderer !== "object" || typeof renderer.display !== "function")) {
        throw new TypeError("A renderer has display(message, report) and withdraw(message)");
      }
      this.renderer = renderer;
      return renderer ? this.displayNext() : null;
    }

    // -- Sessions and built-in triggers (§4) --

    sessionOpen(now, state) {
      return state.backgroundAt !== null && now - state.backgroundAt < this.settings.sessionTimeoutSeconds * 1000;
    }

    /** The app starts (every page load): app_launch, then session_start unless a session is open. */
    launch() {
      if (this.ended) return [];
      const now = this.clock();
      this.expireSlot(now);
      const open = this.sessionOpen(now, this.readState());
      this.updateState((state) => {
        state.backgroundAt = this.inForeground ? null : now;
      });
      const outcomes = [this.fire("app_launch", {}, now)];
      if (!open) outcomes.push(this.fire("session_start", {}, now));
      return outcomes;
    }

    /** The page is hidden: a message not yet seen goes back on the stack, and the queue leaves by beacon. */
    background() {
      if (this.ended || !this.inForeground) return;
      const now = this.clock();
      this.expireSlot(now);
      this.inForeground = false;
      this.updateState((state) => {
        state.backgroundAt = now;
      });
      const slot = this.slot;
      if (slot && !(slot.phase === "shown" && slot.impressed)) {
        this.freeSlot();
        this.push(slot.entry);
        this.withdraw(slot);
      }
      this.sendBeacons();
    }

    /** The page is visible again: session_start if the session ended meanwhile, then app_foreground. */
    foreground() {
      if (this.ended) return [];
      const now = this.clock();
      this.expireSlot(now);
      this.inForeground = true;
      const state = this.readState();
      // Read from storage: another tab of the app may have kept the session open.
      const ended = state.backgroundAt !== null && !this.sessionOpen(now, state);
      this.updateState((stored) => {
        stored.backgroundAt = null;
      });
      const outcomes = [];
      if (ended) outcomes.push(this.fire("session_start", {}, now));
      outcomes.push(this.fire("app_foreground", {}, now));
      this.tick();
      return outcomes;
    }

    /** visibilitychange and pagehide drive background and foreground on a real page. */
    followPage() {
      const document = globalThis.document;
      if (!document) return;
      this.inForeground = document.visibilityState !== "hidden";
      const listen = (target, type, listener) => {
        target.addEventListener(type, listener);
        this.cleanups.push(() => target.removeEventListener(type, listener));
      };
      listen(document, "visibilitychange", () => {
        if (document.visibilityState === "hidden") this.background();
        else if (!this.inForeground) this.foreground();
      });
      listen(globalThis, "pagehide", () => this.background());
      listen(globalThis, "pageshow", (event) => {
        if (event.persisted && !this.inForeground && document.visibilityState !== "hidden") this.foreground();
      });
    }

    // -- What the app does --

    /** A push reached the page (from its service worker): push_received with the push campaign's id; a silent push
     *  fetches the feed at once. Resolves to what `refresh()` resolves to for a silent push, `null` for any other. */
    pushReceived(userInfo) {
      const campaignId = pushCampaignId(userInfo);
      if (campaignId !== null && !this.ended) this.recordFor(campaignId, null, "push_received", {}, this.clock());
      return silentPush(userInfo) ? this.refresh() : Promise.resolve(null);
    }

    /** A push was opened: push_open with the push campaign's id, then the push_click trigger with it as `campaign_id`. */
    pushOpened(userInfo) {
      const campaignId = pushCampaignId(userInfo);
      if (campaignId !== null && !this.ended) this.recordFor(campaignId, null, "push_open", {}, this.clock());
      return this.triggerEvent("push_click", campaignId === null ? {} : { campaign_id: campaignId });
    }

    addToStack(message, data) {
      const problem = messageProblem(message);
      if (problem !== null) throw new TypeError(`addToStack: ${problem}`);
      if (this.ended) return;
      this.localMessages += 1;
      this.push({ local: true, localId: this.localMessages, message: JSON.parse(JSON.stringify(message)), data: readData(data), trigger: null });
    }

    setSuppressed(value) {
      this.suppressed = value === true;
    }

    setDataCollection(value) {
      this.updateState((state) => {
        state.dataCollection = value === true;
      });
    }

    /** A conversion the app attributes to a message it was shown (by default the last one). */
    recordConversion(event, shown) {
      if (typeof event !== "string" || event === "") throw new TypeError("recordConversion needs the conversion's event name");
      const slot = shown === undefined ? this.lastShown : this.slots.get(shown);
      if (!slot || this.ended) return;
      this.record(slot.entry, slot.version.language, "conversion", { event }, this.clock());
    }

    updateDevice(changes) {
      if (!isRecord(changes)) throw new TypeError("updateDevice takes an object such as {language: \"fa\"}");
      for (const key of ["appVersion", "language", "country"]) {
        if (typeof changes[key] === "string") this.device[key] = changes[key];
      }
      if (isRecord(changes.userProperties)) this.device.userProperties = { ...changes.userProperties };
      return this.patterns.evaluate(this.versionPairs(this.feed.campaigns)).then(() => {
        if (!this.ended) this.preload();
      });
    }

    // -- Events (§6) --

    record(entry, language, type, details, now) {
      if (entry.local) return; // a message the app made is not reported
      this.recordFor(entry.campaign.id, language, type, details, now);
    }

    /** Queues an event for a campaign: a message's, or a push's. */
    recordFor(campaignId, language, type, details, now) {
      const state = this.readState();
      const event = {
        id: uuidV7(now, this.settings.random),
        type,
        campaignId,
        occurredAt: new Date(now).toISOString(),
        platform: this.settings.platform(),
      };
      if (state.dataCollection !== false) event.installationId = state.installationId;
      if (language) event.language = language;
      for (const [key, value] of Object.entries(details)) {
        if (value !== undefined) event[key] = value;
      }
      this.store.update("queue", (stored) => {
        const queue = readQueue(stored);
        queue.events.push(event);
        const over = queue.events.length - LIMITS.queue;
        if (over > 0) {
          queue.events.splice(0, over);
          queue.dropped += over;
        }
        return queue;
      });
      if (!this.timers.has("upload")) this.setTimer("upload", Math.max(now + LIMITS.uploadDelayMs, this.uploadBackoff.retryAt));
    }

    queue() {
      return readQueue(this.store.read("queue"));
    }

    pendingDiscards() {
      return readDiscards(this.store.read("discards"));
    }

    /** Marks the counts an upload takes (the oldest, at most LIMITS.discardBatch) as sent, so they never change
     *  again: a retry sends the same counts under the same ids. Returns them. */
    takeDiscards() {
      let taken = [];
      this.store.update("discards", (stored) => {
        const discards = readDiscards(stored);
        taken = discards.slice(0, LIMITS.discardBatch);
        taken.forEach((entry) => {
          entry.sent = true;
        });
        return discards;
      });
      return taken;
    }

    removeDiscards(ids) {
      const sent = new Set(ids);
      this.store.update("discards", (stored) => readDiscards(stored).filter((entry) => !sent.has(entry.id)));
    }

    /** Counts as they leave the device: the installation id only if data collection was on when each started, and is on now. */
    outgoingDiscards(discards) {
      const state = this.readState();
      return discards.map((entry) => {
        const count = { id: entry.id, campaignId: entry.campaignId, reason: entry.reason, day: entry.day, count: entry.count };
        if (entry.identified && state.dataCollection !== false) count.installationId = state.installationId;
        return count;
      });
    }

    /** The events as they leave the device: without the installation id while data collection is off. */
    outgoing(events) {
      if (this.dataCollection) return events;
      return events.map((event) => {
        const copy = { ...event };
        delete copy.installationId;
        return copy;
      });
    }

    removeFromQueue(ids) {
      const sent = new Set(ids);
      this.store.update("queue", (stored) => {
        const queue = readQueue(stored);
        queue.events = queue.events.filter((event) => !sent.has(event.id));
        return queue;
      });
    }

    flush() {
      if (this.ended || this.stoppedStatus !== null) return Promise.resolve({ status: "stopped" });
      if (!this.uploading) {
        this.uploading = this.upload().finally(() => {
          this.uploading = null;
        });
      }
      return this.uploading;
    }

    /** Batches of at most LIMITS.batch, oldest first; ids never change, so a retry after a lost answer counts once. */
    async upload() {
      this.clearTimer("upload");
      const totals = { status: "uploaded", accepted: 0, duplicates: 0, rejected: 0 };
      // Each round empties a batch or stops; the bound is for events that keep arriving meanwhile.
      for (let round = 0; round < 2 * (LIMITS.queue / LIMITS.batch); round += 1) {
        const now = this.clock();
        const events = this.queue().events;
        if (events.length === 0 && this.pendingDiscards().length === 0) break;
        if (!this.uploadBackoff.ready(now)) {
          this.setTimer("upload", this.uploadBackoff.retryAt);
          return { status: "waiting", retryAt: this.uploadBackoff.retryAt };
        }
        const batch = events.slice(0, LIMITS.batch);
        const discards = this.takeDiscards();
        const body = { events: this.outgoing(batch) };
        if (discards.length > 0) body.discards = this.outgoingDiscards(discards);
        let response;
        try {
          response = await send(this.settings.fetch, `${this.settings.server}/api/v1/events`, {
            method: "POST",
            headers: { Authorization: `Bearer ${this.settings.apiKey}`, "Content-Type": "application/json" },
            body: JSON.stringify(body),
            credentials: "omit",
          });
        } catch (error) {
          return this.uploadFailed(0, String(error));
        }
        if (this.ended) return { status: "stopped" };
        if (refusesKey(response.status)) {
          this.halt(response.status);
          return { status: "stopped" };
        }
        if (transient(response.status)) return this.uploadFailed(retryAfterMs(response, this.clock()), `the server answered ${response.status}`);
        if (response.ok) {
          const answer = await response.json().catch(() => null);
          if (isRecord(answer)) {
            totals.accepted += finiteOr(answer.accepted, 0);
            totals.duplicates += finiteOr(answer.duplicates, 0);
            totals.rejected += Array.isArray(answer.rejected) ? answer.rejected.length : 0;
          }
        }
        // Stored (2xx; items it rejected one by one would be rejected again), or refused as a whole (other 4xx): done with.
        this.removeFromQueue(batch.map((event) => event.id));
        this.removeDiscards(discards.map((entry) => entry.id));
        this.uploadBackoff.succeeded();
      }
      return totals;
    }

    uploadFailed(retryAfter, reason) {
      const retryAt = this.uploadBackoff.failed(this.clock(), retryAfter);
      this.setTimer("upload", retryAt);
      return { status: "failed", reason, retryAt };
    }

    /** On page hide: the queue by navigator.sendBeacon, which outlives the page. The events stay queued until a
     *  fetch upload is answered, as a beacon's fate is unknown; the server counts a repeated id once. */
    sendBeacons() {
      if (this.stoppedStatus !== null || typeof navigator === "undefined" || typeof navigator.sendBeacon !== "function") return;
      const url = `${this.settings.server}/api/v1/events?key=${encodeURIComponent(this.settings.apiKey)}`;
      const discards = this.pendingDiscards().length > 0 ? this.takeDiscards() : [];
      for (const body of bodiesOf(this.outgoing(this.queue().events), this.outgoingDiscards(discards), LIMITS.beaconBytes)) {
        let queued = false;
        try {
          queued = navigator.sendBeacon(url, new Blob([body], { type: "text/plain;charset=UTF-8" }));
        } catch {
          queued = false;
        }
        if (!queued) break; // the browser's beacon quota is spent: the rest goes with the next upload
      }
    }

    // -- Time --

    setTimer(name, at) {
      this.clearTimer(name);
      if (this.ended) return;
      const delay = Math.min(LIMITS.timerMs, Math.max(0, at - this.clock()));
      this.timers.set(name, setTimeout(() => {
        this.timers.delete(name);
        this.tick();
      }, delay));
    }

    clearTimer(name) {
      clearTimeout(this.timers.get(name));
      this.timers.delete(name);
    }

    /** Checks every time rule now: timeouts, a poll that is due, an upload that is due. */
    tick() {
      if (this.ended) return Promise.resolve();
      const now = this.clock();
      this.expireSlot(now);
      if (this.slot && !(this.slot.phase === "shown" && this.slot.impressed)) {
        const timeout = this.slot.phase === "loading" ? this.settings.displayTimeoutSeconds : this.settings.rendererTimeoutSeconds;
        if (!this.timers.has("slot")) this.setTimer("slot", this.slot.since + timeout * 1000);
      }
      const work = [];
      if (this.stoppedStatus === null) {
        if (now >= this.nextPollAt) work.push(this.refresh());
        else if (!this.timers.has("poll")) this.setTimer("poll", this.nextPollAt);
        if (this.queue().events.length > 0 || this.pendingDiscards().length > 0) {
          if (this.uploadBackoff.ready(now)) work.push(this.flush());
          else if (!this.timers.has("upload")) this.setTimer("upload", this.uploadBackoff.retryAt);
        }
      }
      return Promise.all(work).then(() => undefined);
    }

    stop() {
      if (this.ended) return;
      const slot = this.slot;
      if (slot) {
        this.freeSlot();
        this.withdraw(slot);
      }
      this.ended = true;
      for (const name of [...this.timers.keys()]) this.clearTimer(name);
      for (const cleanup of this.cleanups.splice(0)) cleanup();
      this.patterns.close();
    }

    api() {
      const client = this;
      const describe = (entry) => ({ campaignId: entry.local ? null : entry.campaign.id, local: entry.local });
      return Object.freeze({
        triggerEvent: (name, properties) => client.triggerEvent(name, properties),
        displayNext: () => client.displayNext(),
        setSuppressed: (value) => client.setSuppressed(value),
        setDataCollection: (value) => client.setDataCollection(value),
        pushReceived: (userInfo) => client.pushReceived(userInfo),
        pushOpened: (userInfo) => client.pushOpened(userInfo),
        addToStack: (message, data) => client.addToStack(message, data),
        recordConversion: (event, message) => client.recordConversion(event, message),
        updateDevice: (changes) => client.updateDevice(changes),
        setRenderer: (renderer) => client.setRenderer(renderer),
        refresh: () => client.refresh(),
        flush: () => client.flush(),
        tick: () => client.tick(),
        launch: () => client.launch(),
        background: () => client.background(),
        foreground: () => client.foreground(),
        stop: () => client.stop(),
        get installationId() { return client.readState().installationId; },
        get dataCollection() { return client.dataCollection; },
        get suppressed() { return client.suppressed; },
        get discards() { return { ...client.discards }; },
        get stack() { return client.stack.map(describe).reverse(); },
        get slot() { return client.slot ? { ...describe(client.slot.entry), phase: client.slot.phase } : null; },
        get queuedEvents() { return client.queue().events; },
        get pendingDiscards() { return client.outgoingDiscards(client.pendingDiscards()); },
        get droppedDiscards() { return client.droppedDiscards; },
        get droppedEvents() { return client.queue().dropped; },
        get stopped() { return client.stoppedStatus; },
      });
    }
  }

  // ---- Herald.start -----------------------------------------------------------------------------

  function readSeconds(options, name, fallback) {
    const value = options[name];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw new TypeError(`Herald.start: ${name} is a number of seconds, 0 or more`);
    return value;
  }

  function readOptions(options) {
    if (!isRecord(options)) throw new TypeError("Herald.start needs options: {server, apiKey}");
    const server = typeof options.server === "string" ? options.server.trim().replace(/\/+$/, "") : "";
    if (!/^https?:\/\/[^/?#]+/i.test(server)) throw new TypeError("Herald.start: server is your Herald's address, such as https://herald.example.com");
    if (typeof options.apiKey !== "string" || options.apiKey === "") throw new TypeError("Herald.start: apiKey is an API key of your app with feed:read and events:write");
    const hook = (name, fallback) => {
      const value = options[name];
      if (value === undefined) return fallback;
      if (typeof value !== "function") throw new TypeError(`Herald.start: ${name} is a function`);
      return value;
    };
    let storage = options.storage;
    let storageError = null;
    if (storage === undefined) ({ storage, error: storageError } = openLocalStorage());
    const navigatorLanguage = typeof navigator !== "undefined" && navigator.language ? navigator.language : "en";
    const fetchFunction = typeof globalThis.fetch === "function" ? (url, init) => globalThis.fetch(url, init) : undefined;
    const platform = options.platform;
    const orientation = options.orientation;
    return {
      server,
      apiKey: options.apiKey,
      namespace: `herald.${fnv1a64(`${server}\n${options.apiKey}`).toString(16)}.`,
      language: typeof options.language === "string" && options.language !== "" ? options.language : navigatorLanguage,
      installationId: typeof options.installationId === "string" && options.installationId !== "" ? options.installationId : null,
      dataCollection: options.dataCollection !== false,
      appVersion: typeof options.appVersion === "string" ? options.appVersion : "",
      country: typeof options.country === "string" ? options.country : "",
      userProperties: isRecord(options.userProperties) ? { ...options.userProperties } : {},
      sessionTimeoutSeconds: readSeconds(options, "sessionTimeoutSeconds", DEFAULTS.sessionTimeoutSeconds),
      displayTimeoutSeconds: readSeconds(options, "displayTimeoutSeconds", DEFAULTS.displayTimeoutSeconds),
      rendererTimeoutSeconds: readSeconds(options, "rendererTimeoutSeconds", DEFAULTS.rendererTimeoutSeconds),
      minimumIntervalSeconds: readSeconds(options, "minimumIntervalSeconds", null),
      delegate: options.delegate && typeof options.delegate === "object" ? options.delegate : null,
      container: options.container || null,
      words: options.words,
      styleNonce: typeof options.styleNonce === "string" ? options.styleNonce : null,
      renderer: options.renderer,
      storage: storage || null,
      storageError,
      // Testing hooks (docs/web-client.md): a vector or a test drives time, network, images and the device.
      clock: hook("clock", () => Date.now()),
      random: hook("random", null),
      fetch: hook("fetch", fetchFunction),
      loadImage: hook("loadImage", loadImage),
      orientation: typeof orientation === "function" ? orientation : orientationOfViewport,
      platform: typeof platform === "function" ? platform : () => (typeof platform === "string" ? platform : "web"),
      firstOpen: finiteOr(options.firstOpen, null),
      launch: options.launch !== false,
      lifecycle: options.lifecycle !== false,
      navigate: (url) => globalThis.location.assign(url),
    };
  }

  /** Loads an image into the browser's cache: true when it loaded. */
  function loadImage(url) {
    return new Promise((resolve) => {
      const image = new Image();
      image.onload = () => resolve(true);
      image.onerror = () => resolve(false);
      image.src = url;
    });
  }

  /**
   * Starts a client: reads what this device kept, fetches the feed, follows the page's visibility,
   * registers the renderer (the built-in one unless `renderer` is given; null for none yet) and fires
   * app_launch and, when no session is open, session_start.
   */
  async function start(options) {
    const settings = readOptions(options);
    if (settings.storageError) callDelegate(settings.delegate, "storageFailed", settings.storageError);
    const client = new Client(settings);
    await client.open();
    if (settings.lifecycle) client.followPage();
    if (settings.renderer === undefined) {
      const document = globalThis.document;
      const container = settings.container;
      const register = () => {
        if (client.ended) return;
        client.setRenderer(pageRenderer({
          document,
          container: () => (typeof container === "function" ? container() : container) || document.body,
          language: settings.language,
          words: settings.words,
          styleNonce: settings.styleNonce,
        }));
      };
      // Before the page has a body, launch's messages wait on the stack; registering shows the top one.
      if (document.body) register();
      else document.addEventListener("DOMContentLoaded", register, { once: true });
    } else if (settings.renderer !== null) {
      client.setRenderer(settings.renderer);
    }
    if (settings.launch) client.launch();
    return client.api();
  }

  return Object.freeze({ start, version: SDK_VERSION });
})();
