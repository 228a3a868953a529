// Eligibility (docs/delivery-semantics.md §2): triggers, schedule, targeting, frequency, the choice between
// campaigns, and the app version patterns that targeting reads.

import { LIMITS, isRecord, isFilterValue, ownProperty, finiteOr } from "./values.js";
import { rolloutBucket } from "./ids.js";

const DAY_MS = 86400000;

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

/** Whether `event` with `properties` is `rule`'s event (a trigger's or a conversion goal's) with every filter met. */
function eventMatches(rule, event, properties) {
  return isRecord(rule) && rule.event === event
    && (!Array.isArray(rule.filters) || rule.filters.every((filter) => filterHolds(filter, properties)));
}

export function triggerFires(campaign, event, properties) {
  return campaign.triggers.some((trigger) => eventMatches(trigger, event, properties));
}

/** Whether the event is a conversion for the campaign (§6.2): its goal's event and filters, inside the
 * goal's window after the last impression (`lastImpression`, ms), the window's end included. */
export function converts(campaign, event, properties, lastImpression, now) {
  const goal = campaign.conversion;
  if (goal === null || typeof lastImpression !== "number" || !eventMatches(goal, event, properties)) return false;
  const [fewest, most] = LIMITS.conversionWindowHours;
  if (goal.windowHours < fewest || goal.windowHours > most) return false;
  const elapsed = now - lastImpression;
  return elapsed >= 0 && elapsed <= goal.windowHours * 3600000;
}

/** `pt` matches `pt`, `pt-BR` and `PT-br`; `pt-BR` does not match `pt`. */
function languageMatches(wanted, actual) {
  const target = String(wanted).toLowerCase();
  const language = String(actual).toLowerCase();
  return target === language || language.startsWith(`${target}-`);
}

/** Inside the schedule window; test campaigns ignore the schedule. */
export function scheduled(campaign, now) {
  if (campaign.test) return true;
  if (campaign.start !== null && campaign.start > now) return false;
  return campaign.end === null || now < campaign.end;
}

/** Whether the campaign targets this device; `context` holds what the client keeps (first open, installation, regex results). */
export function targets(campaign, device, context) {
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
export function frequencyAllows(campaign, lastImpression, now) {
  if (typeof lastImpression !== "number") return true;
  switch (campaign.frequency.type) {
    case "always": return true;
    case "every_n_days": return now - lastImpression >= finiteOr(campaign.frequency.days, 1) * DAY_MS;
    default: return false; // "once", and a type this client does not know: never twice
  }
}

/** The lowest priority number; on a tie the latest start; on a tie again the higher id. */
export function choose(candidates) {
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
export class VersionPatterns {
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
