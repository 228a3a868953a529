// Display: the built-in renderer, each message in a shadow root on the page.

import { isRecord, nonBlank, finiteOr } from "./values.js";
import { languageFallbacks, isRightToLeftLanguage, textDirection } from "./message.js";

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

export const orientationOfViewport = () => (globalThis.innerWidth > globalThis.innerHeight ? "landscape" : "portrait");

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
export function pageRenderer(settings) {
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
