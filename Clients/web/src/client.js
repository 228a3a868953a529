// The client: one per Herald.start, holding the feed, the stack, the slot, sessions and the event queue.

import { LIMITS, isRecord, finiteOr, rethrowLater, callDelegate } from "./values.js";
import { uuidV7, uuidV4 } from "./ids.js";
import { messageProblem, messageVersion, imagesOf, fetchableImage } from "./message.js";
import { triggerFires, converts, scheduled, targets, frequencyAllows, choose, VersionPatterns } from "./eligibility.js";
import { readData, readFeed } from "./feed.js";
import { Store, readState } from "./storage.js";
import { Backoff, retryAfterMs, transient, refusesKey, send } from "./network.js";
import { DISCARD_REASONS, CLICK_ACTIONS, DISMISS_TYPES, ERROR_CODES, pushCampaignId, silentPush, bodiesOf, readDiscards, readQueue } from "./events.js";

// ---- The client -------------------------------------------------------------------------------

const entryKey = (entry) => (entry.local ? `local:${entry.localId}` : `campaign:${entry.campaign.id}`);
const entryId = (entry) => (entry.local ? "local" : entry.campaign.id);

/**
 * One client: the feed, the stack, the slot, sessions and the event queue of docs/delivery-semantics.md.
 * Time is read from `settings.clock` at every step, and every time rule is checked whenever the client is
 * asked something, so an injected clock behaves as the wall clock does.
 */
export class Client {
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
    // Before suppression: a suppressed display does not undo what the user did.
    this.recordGoalConversions(name, properties, now);
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

  /** §6.2: one `conversion` event for each campaign whose goal this firing meets, in the version the device is shown. */
  recordGoalConversions(name, properties, now) {
    const impressions = this.readState().impressions;
    for (const campaign of this.feed.campaigns) {
      if (!converts(campaign, name, properties, impressions[campaign.id], now)) continue;
      this.recordFor(campaign.id, messageVersion(campaign.message, this.device.language).language, "conversion", { event: name }, now);
    }
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
