// The feed: what GET /api/v1/feed answers, read leniently into the campaigns the client acts on.

import { DEFAULTS, LIMITS, isRecord, finiteOr, parseTime } from "./values.js";
import { messageProblem } from "./message.js";

// ---- The feed ---------------------------------------------------------------------------------

export function readData(data) {
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
  const conversion = readConversionGoal(raw.conversion);
  if (conversion === undefined) return null;
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
    conversion,
  };
}

/** A campaign's conversion goal (§6.2): null when it has none, undefined when it cannot be read (as the
 * Swift client, which then skips the campaign). A window outside 1–720 hours is kept and never covers. */
function readConversionGoal(raw) {
  if (raw === undefined || raw === null) return null;
  if (!isRecord(raw) || typeof raw.event !== "string") return undefined;
  const windowHours = raw.windowHours ?? DEFAULTS.conversionWindowHours;
  if (!Number.isSafeInteger(windowHours) || (raw.filters !== undefined && !Array.isArray(raw.filters))) return undefined;
  return { event: raw.event, filters: raw.filters ?? [], windowHours };
}

export function readFeed(text) {
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
