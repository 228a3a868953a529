// herald.js: Herald's web delivery client, its entry module. Plain ES2020, no dependencies. The client is
// the ES modules in this folder, one per concern (values, ids, message, eligibility, feed, storage, network,
// events, display, client, and this one, which starts a client); Tools/web-client-bundle.py joins them into
// Clients/web/herald.js, which Herald serves wrapped twice: as a classic script (/sdk/v1/herald.js, which
// sets globalThis.Herald) and as an ES module (/sdk/v1/herald.mjs, `import Herald from …`). The rules it
// follows are docs/delivery-semantics.md (the same as the Swift client's, pinned by Tests/conformance/);
// how a web app uses it is docs/web-client.md.

import { DEFAULTS, isRecord, finiteOr, callDelegate } from "./values.js";
import { fnv1a64 } from "./ids.js";
import { openLocalStorage } from "./storage.js";
import { orientationOfViewport, pageRenderer } from "./display.js";
import { Client } from "./client.js";

const SDK_VERSION = "1";

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

export const Herald = Object.freeze({ start, version: SDK_VERSION });
