// The web client's demo page (/sdk/v1/demo). A marketer pastes an app's API key, which stays in this
// browser's localStorage and is sent only to this Herald; herald.js (loaded just before this script)
// starts with it, and the buttons fire events, so the app's campaigns show here as visitors' browsers
// show them. The page works only with script (its controls start disabled); every word this script
// shows comes from the page's data- attributes.

document.addEventListener("DOMContentLoaded", () => {
  const root = document.querySelector("[data-demo]");
  if (root) setUpDemo(root);
});

function setUpDemo(root) {
  const words = root.dataset;
  const byId = (id) => document.getElementById(id);
  const keyInput = byId("demo-key");
  const status = byId("demo-status");
  const installation = byId("demo-installation");
  const events = byId("demo-events");
  let client = null;

  const say = (text) => {
    status.textContent = text;
  };
  const fill = (template, values) =>
    template.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));

  // A problem next to its field, read with the field by screen readers; the field gets the focus.
  function setError(input, message) {
    const error = byId(input.id + "-error");
    error.textContent = message;
    error.hidden = !message;
    const described = (input.getAttribute("aria-describedby") || "").split(/\s+/).filter((id) => id && id !== error.id);
    if (message) described.push(error.id);
    if (described.length) input.setAttribute("aria-describedby", described.join(" "));
    else input.removeAttribute("aria-describedby");
    if (message) {
      input.setAttribute("aria-invalid", "true");
      input.focus();
    } else {
      input.removeAttribute("aria-invalid");
    }
  }

  // localStorage may refuse (private windows, storage turned off): the page then just forgets the key.
  const storage = {
    read() {
      try {
        return localStorage.getItem(words.keyStorage) || "";
      } catch (error) {
        return "";
      }
    },
    write(key) {
      try {
        localStorage.setItem(words.keyStorage, key);
      } catch (error) {
        // Kept for this page only.
      }
    },
    forget() {
      try {
        localStorage.removeItem(words.keyStorage);
      } catch (error) {
        // Nothing was stored.
      }
    },
  };

  // Herald says which app and scopes a key has (the page is Herald's own origin, so no CORS is
  // involved): a mistyped, revoked or too narrow key is named here instead of failing quietly later.
  async function checkKey(apiKey) {
    const response = await fetch("/api/v1/key", { headers: { Authorization: "Bearer " + apiKey } });
    if (!response.ok) return { refusedWith: response.status };
    return { info: await response.json() };
  }

  async function start(apiKey) {
    if (typeof globalThis.Herald === "undefined") {
      say(words.unavailable);
      return;
    }
    say(words.checking);
    let checked;
    try {
      checked = await checkKey(apiKey);
    } catch (error) {
      say(fill(words.failed, { reason: error.message }));
      return;
    }
    if (checked.refusedWith) {
      say(fill(words.refused, { status: checked.refusedWith }));
      return;
    }
    const missing = ["feed:read", "events:write"].filter((scope) => !checked.info.key.scopes.includes(scope));
    if (missing.length) {
      say(fill(words.scopesMissing, { scopes: missing.join(" ") }));
      return;
    }
    try {
      client = await globalThis.Herald.start({ server: location.origin, apiKey });
    } catch (error) {
      say(fill(words.failed, { reason: error.message }));
      return;
    }
    const id = typeof client.installationId === "string" ? client.installationId : "";
    installation.textContent = id || words.noInstallation;
    events.disabled = false;
    say(fill(words.started, { app: checked.info.app.name }));
  }

  // What the web client did with each event this page fires, newest first, in the page's words: shown,
  // waiting, or why not. Campaigns are named by id: the feed carries no names (they are the marketers').
  const outcomes = byId("demo-outcomes");
  const outcomeWords = byId("demo-outcome-words").dataset;
  const number = new Intl.NumberFormat(document.documentElement.lang || undefined, { useGrouping: false });
  const WHY = { schedule: "whySchedule", targeting: "whyTargeting", frequency: "whyFrequency" };
  const DISCARD = { orientation: "discardOrientation", image_fetch: "discardImageFetch", delegate: "discardDelegate" };
  const OUTCOME = {
    displayed: "displayed", pending: "pending", stacked: "stacked", throttled: "throttled", suppressed: "suppressed", stopped: "stopped",
  };
  function describe(result) {
    const values = { event: result.event, campaign: typeof result.campaign === "number" ? number.format(result.campaign) : "" };
    if (result.outcome in OUTCOME) return fill(outcomeWords[OUTCOME[result.outcome]], values);
    if (result.outcome === "discarded") {
      const why = result.reason in DISCARD ? outcomeWords[DISCARD[result.reason]] : String(result.reason);
      return fill(outcomeWords.discarded, { ...values, why });
    }
    if (result.outcome === "noMatch" && Array.isArray(result.passedOver) && result.passedOver.length > 0) {
      const reasons = result.passedOver.map((each) => fill(outcomeWords.reasonItem, {
        campaign: number.format(each.campaign), why: each.reason in WHY ? outcomeWords[WHY[each.reason]] : String(each.reason),
      }));
      return fill(outcomeWords.passedOver, { ...values, reasons: reasons.join(outcomeWords.listSeparator) });
    }
    if (result.outcome === "noMatch") return fill(outcomeWords.noMatch, values);
    return fill(outcomeWords.other, { ...values, outcome: String(result.outcome) });
  }
  function show(result) {
    const item = document.createElement("li");
    item.dataset.outcome = String(result.outcome);
    item.textContent = describe(result);
    outcomes.prepend(item);
    // A long session keeps the newest fifty.
    while (outcomes.children.length > 50) outcomes.lastElementChild.remove();
    byId("demo-outcomes-empty").hidden = true;
  }

  function fire(name, properties) {
    Promise.resolve(client.triggerEvent(name, properties))
      .then((result) => {
        say(fill(words.fired, { event: name }));
        if (result && typeof result === "object") show(result);
      })
      .catch((error) => say(fill(words.failed, { reason: error.message })));
  }

  byId("demo-key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const apiKey = keyInput.value.trim();
    setError(keyInput, apiKey ? "" : words.keyRequired);
    if (!apiKey) return;
    storage.write(apiKey);
    // One client per page: another key starts on a fresh page, which reads it back from storage.
    if (client) location.reload();
    else start(apiKey);
  });

  byId("demo-forget").addEventListener("click", () => {
    storage.forget();
    keyInput.value = "";
    if (client) location.reload();
    else say(words.forgotten);
  });

  root.querySelectorAll("[data-fire]").forEach((button) => {
    button.addEventListener("click", () => fire(button.dataset.fire, {}));
  });

  // Event IDs as the composer takes them: a letter first, then letters, digits and _, at most 40;
  // analytics' reserved prefixes refused.
  const eventID = /^[A-Za-z][A-Za-z0-9_]{0,39}$/;
  const reserved = /^(firebase_|google_|ga_)/i;
  byId("demo-custom-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const nameInput = byId("demo-event");
    const propertiesInput = byId("demo-properties");
    const name = nameInput.value.trim();
    const nameIsValid = eventID.test(name) && !reserved.test(name);
    let properties = {};
    let propertiesAreValid = true;
    const text = propertiesInput.value.trim();
    if (text) {
      try {
        properties = JSON.parse(text);
        propertiesAreValid = properties !== null && typeof properties === "object" && !Array.isArray(properties);
      } catch (error) {
        propertiesAreValid = false;
      }
    }
    // The later call takes the focus: the first field with a problem.
    setError(propertiesInput, propertiesAreValid ? "" : words.propertiesInvalid);
    setError(nameInput, nameIsValid ? "" : words.eventInvalid);
    if (nameIsValid && propertiesAreValid) fire(name, properties);
  });

  byId("demo-purchase-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const product = byId("demo-product").value.trim();
    const priceInput = byId("demo-price");
    const priceText = priceInput.value.trim();
    const price = Number(priceText);
    const priceIsValid = priceText === "" || Number.isFinite(price);
    setError(priceInput, priceIsValid ? "" : words.priceInvalid);
    if (!priceIsValid) return;
    const properties = {};
    if (product) properties.product_id = product;
    if (priceText !== "") properties.value = price;
    fire("purchase", properties);
  });

  byId("demo-key-controls").disabled = false;
  const saved = storage.read();
  if (saved) {
    keyInput.value = saved;
    start(saved);
  } else {
    say(words.idle);
  }
}
