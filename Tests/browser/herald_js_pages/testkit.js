// The test kit of Tests/browser/test_herald_js.py: a fake Herald server behind herald.js's fetch hook, a
// clock the test can move, and recorders for the delegate's callbacks and for beacons.
window.testkit = (() => {
  const kit = {
    now: Date.parse("2026-01-01T09:00:00Z"),
    realClock: true,
    feed: { schemaVersion: 1, app: { id: 1, name: "Shop", minIntervalSeconds: 0 }, generatedAt: "2026-01-01T09:00:00Z", pollAfterSeconds: 60, campaigns: [] },
    etag: '"r1"',
    requests: [],
    answers: { feed: [], events: [] }, // answers to give before the defaults: {status, headers, body} or {networkError: true}
    calls: [],
    beacons: [],
    decision: "show",
    herald: null,
  };

  kit.clock = () => (kit.realClock ? Date.now() : kit.now);

  kit.fetch = async (url, init = {}) => {
    const path = new URL(url).pathname;
    const headers = { ...(init.headers || {}) };
    kit.requests.push({ method: init.method || "GET", path, url: String(url), headers, body: init.body ? JSON.parse(init.body) : null, at: kit.clock() });
    const feed = path.endsWith("/api/v1/feed");
    const answer = (feed ? kit.answers.feed : kit.answers.events).shift();
    if (answer && answer.networkError) throw new TypeError("Failed to fetch");
    if (answer) return new Response(answer.body === undefined ? null : answer.body, { status: answer.status, headers: answer.headers || {} });
    if (feed) {
      if (headers["If-None-Match"] === kit.etag) return new Response(null, { status: 304, headers: { ETag: kit.etag } });
      return new Response(JSON.stringify(kit.feed), { status: 200, headers: { ETag: kit.etag, "Content-Type": "application/json" } });
    }
    const events = JSON.parse(init.body).events;
    return new Response(JSON.stringify({ accepted: events.length, duplicates: 0, rejected: [] }), { status: 200 });
  };

  kit.image = (name, query = "") => `${location.origin}/img/${name}.png${query}`;

  /** A running campaign shown by the event `show_<id>`. */
  kit.campaign = (id, message, extra = {}) => ({
    id, priority: 5, schedule: { start: null, end: null, timeZone: "UTC" },
    triggers: [{ event: `show_${id}`, filters: [] }], frequency: { type: "always" }, targeting: {},
    message, data: [{ key: "promo", value: "SPRING" }], startedAt: "2025-12-01T00:00:00Z", ...extra,
  });

  kit.setCampaigns = (campaigns) => {
    kit.feed = { ...kit.feed, campaigns };
    kit.etag = `"r${Date.now()}${Math.random()}"`;
  };

  const record = (name, message, rest = {}) => {
    kit.calls.push({ name, campaignId: message ? message.campaignId : null, local: message ? message.local : null, ...rest });
    kit.callTimes.push(performance.now());
  };
  kit.callTimes = [];
  kit.calledAt = (name) => kit.calls.map((call, index) => (call.name === name ? kit.callTimes[index] : null)).filter((at) => at !== null);
  kit.delegate = {
    decide: (message) => {
      record("decide", message);
      return kit.decision;
    },
    displayed: (message, element) => record("displayed", message, { element: element ? element.getAttribute("data-herald-message") : null }),
    noMatchingTrigger: (event) => record("noMatchingTrigger", null, { event }),
    clicked: (message, action, url) => {
      record("clicked", message, { action, url });
      return false; // no navigation away from the test page
    },
    dismissed: (message, type) => record("dismissed", message, { type }),
    displayError: (message, code) => record("displayError", message, { code }),
    stopped: (status) => record("stopped", null, { status }),
    storageFailed: (error) => record("storageFailed", null, { error: String(error && error.name || error) }),
  };

  kit.start = async (options = {}) => {
    kit.herald = await Herald.start({
      server: "https://herald.test",
      apiKey: "hrld_test",
      installationId: "0e9a4b6c-0000-4000-8000-00000000beef",
      language: "en",
      fetch: kit.fetch,
      clock: kit.clock,
      delegate: kit.delegate,
      ...options,
    });
    return kit.herald;
  };

  kit.called = (name) => kit.calls.filter((call) => call.name === name);

  kit.interceptBeacons = () => {
    navigator.sendBeacon = (url, data) => {
      const beacon = { url: String(url), type: data.type, size: data.size, text: null };
      data.text().then((text) => {
        beacon.text = text;
      });
      kit.beacons.push(beacon);
      return true;
    };
  };

  /** The page as a browser has it when the user switches away, and back. */
  kit.setVisibility = (state) => {
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => state });
    Object.defineProperty(document, "hidden", { configurable: true, get: () => state === "hidden" });
    document.dispatchEvent(new Event("visibilitychange"));
  };

  kit.host = (id) => document.querySelector(`[data-herald-message="${id}"]`);

  kit.waitFor = (predicate, timeoutMs = 5000) => new Promise((resolve, reject) => {
    const started = Date.now();
    const check = () => {
      const value = predicate();
      if (value) resolve(value);
      else if (Date.now() - started > timeoutMs) reject(new Error(`timed out waiting for ${predicate}`));
      else setTimeout(check, 20);
    };
    check();
  });

  return kit;
})();
