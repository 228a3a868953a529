// Messages: the parts each layout needs, the version for a device's language, images and text direction.

import { isRecord, ownProperty, nonBlank } from "./values.js";

const LAYOUTS = ["card", "modal", "image_only", "banner", "slideup", "fullscreen"];
const RIGHT_TO_LEFT_LANGUAGES = ["ar", "fa", "he", "iw", "ur", "ps", "sd", "ug", "yi", "dv", "ckb"];

// ---- Messages: the parts each layout needs, language versions, direction ----------------------

/** A message devices can draw: the layout's required parts are there (Herald refuses to publish one without). */
export function messageProblem(message) {
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
export function languageFallbacks(language) {
  const parts = String(language).toLowerCase().split(/[-_]/).filter((part) => part !== "");
  const tags = [];
  while (parts.length > 0) {
    tags.push(parts.join("-"));
    parts.pop();
  }
  return tags;
}

export function isRightToLeftLanguage(tag) {
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
export function messageVersion(message, language) {
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
export function imagesOf(message) {
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
export function fetchableImage(url) {
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
export function textDirection(texts) {
  for (const text of texts) {
    for (const character of text) {
      if (/\p{Alphabetic}/u.test(character)) return isRightToLeftCodePoint(character.codePointAt(0)) ? "rtl" : "ltr";
    }
  }
  return "ltr";
}
