// Small enhancements; every page works without them.

// The page's words for what the script writes, in the page's language: the server puts the
// catalog's `script` section as JSON in <body data-strings> (an attribute, so no inline script).
let pageStrings = null;
function pageString(key, fallback) {
  if (pageStrings === null) {
    pageStrings = {};
    try {
      pageStrings = JSON.parse(document.body.dataset.strings || "{}") || {};
    } catch (error) {
      pageStrings = {};
    }
  }
  return typeof pageStrings[key] === "string" ? pageStrings[key] : fallback;
}

document.addEventListener("DOMContentLoaded", () => {
  // Take keyboard and screen-reader users straight to a form's list of problems.
  const summary = document.querySelector(".error-summary");
  if (summary) summary.focus();

  // "Copy" buttons stay hidden unless the clipboard can be used.
  if (navigator.clipboard) {
    document.querySelectorAll("[data-copy]").forEach((button) => {
      button.hidden = false;
      button.addEventListener("click", async () => {
        const source = document.getElementById(button.dataset.copy);
        await navigator.clipboard.writeText(source.textContent.trim());
        button.textContent = pageString("copied", "Copied");
      });
    });
  }

  // A report's daily chart scrolls inside its frame on a narrow screen: open it on the latest days, at its
  // right end (the frame is dir="ltr" in every language, so that is the largest scrollLeft).
  document.querySelectorAll("[data-scroll-to-end]").forEach((frame) => {
    frame.scrollLeft = frame.scrollWidth - frame.clientWidth;
  });

  // Sign-in and setup tell the server the browser's time zone: a first sign-in keeps it for the user.
  document.querySelectorAll("input[data-browser-time-zone]").forEach((input) => {
    input.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  });

  // A key or service-account file picked on the app page is read into its text field (the field alone
  // works without script: paste the file's text). Files over 64 KiB are no key and are not read.
  document.querySelectorAll("input[type=file][data-fills]").forEach((picker) => {
    picker.addEventListener("change", () => {
      const file = picker.files && picker.files[0];
      const field = document.getElementById(picker.dataset.fills);
      if (!file || !field || file.size > 65536) return;
      const reader = new FileReader();
      reader.addEventListener("load", () => { field.value = reader.result; });
      reader.readAsText(file);
    });
  });

  const composer = document.querySelector("form[data-composer]");
  if (composer) setUpComposer(composer);
  if (composer && composer.querySelector("[data-push-bytes]")) followPushBytes(composer);
  if (composer) followAudience(composer);

  const pushProgress = document.querySelector("[data-push-progress]");
  if (pushProgress && pushProgress.dataset.done !== "true") followPushProgress(pushProgress);

  const testSends = document.querySelector("[data-test-sends-pending]");
  if (testSends) followTestSends(testSends);
});

// ---- Pages that follow something on its way -------------------------------------
// Calls `step` every two seconds while the page is visible, until it answers true (done). A failure
// (offline for a moment) is tried again at the next turn.
function pollWhileVisible(step) {
  async function poll() {
    if (document.visibilityState === "visible") {
      try {
        if (await step()) return;
      } catch (error) {
        // The next turn tries again.
      }
    }
    window.setTimeout(poll, 2000);
  }
  window.setTimeout(poll, 2000);
}

// A push test on its way: while a device's notification is still in the outbox, the campaign page is
// read again and its list of tests put in place, inside the same live region, so screen readers hear
// each device's answer; it stops once every device has one.
function followTestSends(section) {
  const results = section.querySelector("[data-test-send-results]");
  pollWhileVisible(async () => {
    const answer = await fetch(window.location.pathname, { headers: { Accept: "text/html" }, credentials: "same-origin" });
    if (!answer.ok) return false;
    const page = new DOMParser().parseFromString(await answer.text(), "text/html");
    const fresh = page.querySelector("#test-sends [data-test-send-results]");
    if (fresh && results) results.replaceChildren(...Array.from(fresh.childNodes, (node) => document.importNode(node, true)));
    return !page.querySelector("[data-test-sends-pending]");
  });
}

// A push campaign's sending: the page shows the counts as of its render; while the send goes on, they
// are read again, in the page's digits. When the send is done the page is loaded once more, so its
// summary and failures by reason come from the server.
function followPushProgress(section) {
  const format = new Intl.NumberFormat(document.documentElement.lang || undefined);
  const bar = section.querySelector("progress");
  pollWhileVisible(async () => {
    const answer = await fetch(section.dataset.pushProgress, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (!answer.ok) return false;
    const counts = await answer.json();
    section.querySelectorAll("[data-push-count]").forEach((cell) => {
      const value = counts[cell.dataset.pushCount];
      if (typeof value === "number") cell.textContent = format.format(value);
    });
    if (bar && typeof counts.planned === "number") {
      bar.max = Math.max(counts.planned, 1);
      bar.value = counts.finished;
    }
    if (counts.done !== true) return false;
    window.location.reload();
    return true;
  });
}

// ---- Server words that follow the form -------------------------------------------
// Some lines of the composer are the server's words about what the form holds: it measures or counts,
// and words the result in the reader's language. `followForm` posts the form to `address` a moment
// (`delay` ms) after a change that `matters` (every change when not given; the row and version buttons
// too), cancels the question still under way, and hands the answer's JSON to `show`. Offline for a
// moment, or answered with an error, the words stay as they are until the next change.
function followForm(form, { address, delay, matters, show }) {
  let timer;
  let running = null;
  async function ask() {
    if (running) running.abort();
    const controller = new AbortController();
    running = controller;
    try {
      const answer = await fetch(address, {
        method: "POST", body: new URLSearchParams(new FormData(form)), signal: controller.signal,
        headers: { Accept: "application/json" }, credentials: "same-origin",
      });
      if (answer.ok) show(await answer.json());
    } catch (error) {
      // Aborted by a newer change, or offline for a moment: the next change asks again.
    }
  }
  const later = (event) => {
    if (matters && !matters(event)) return;
    clearTimeout(timer);
    timer = setTimeout(ask, delay);
  };
  form.addEventListener("input", later);
  form.addEventListener("change", later);
  if (!matters) {
    form.addEventListener("click", (event) => {
      if (event.target.closest("button[data-version-add], button[data-version-remove], button[data-row-add], button[data-row-remove]")) later(event);
    });
  }
}

// A notification's bytes left, as the marketer types: the server measures the payload it will send
// (APNs's and FCM's limits, in UTF-8 bytes). A counter that says the same again is left alone, so
// screen readers are not told it twice.
function followPushBytes(form) {
  followForm(form, {
    address: "/campaigns/push-bytes",
    delay: 250,
    show: ({ versions }) => {
      form.querySelectorAll("[data-push-bytes]").forEach((counter) => {
        const version = versions.find((each) => each.tag === counter.dataset.pushBytes);
        if (!version) return;
        if (counter.textContent !== version.text) counter.textContent = version.text;
        counter.classList.toggle("push-bytes-over", version.over === true);
      });
    },
  });
}

// How many installations the targeting reaches, as it changes: the server counts the app's registered
// installations the targeting admits. The line is hidden while there are no words (no app chosen, or a
// targeting field to fix); the same words are not set twice, so screen readers hear a count once.
function followAudience(form) {
  const line = form.querySelector("[data-audience]");
  if (!line) return;
  followForm(form, {
    address: "/campaigns/audience",
    delay: 400,
    // Only what the count depends on: the app, the channel (a push line says how many hold a token) and
    // the targeting; the message's fields leave it as it is.
    matters: (event) => /^(app$|channel$|targeting\.)/.test((event.target && event.target.name) || ""),
    show: ({ text }) => {
      if (line.textContent !== text) line.textContent = text;
      line.hidden = text === "";
    },
  });
}

// ---- Campaign composer -------------------------------------------------------
// Without script the composer still works: its row, language-version and "Show this layout's
// fields" buttons are submit buttons the server answers by re-rendering the form (nothing is
// saved). With script, the same changes happen in the page.
//
// Field names are JSON paths (`data.0.key`, `triggers.1.filters.0.op`) and ids are derived
// from them ("field-" + the path, each character that is not a letter or digit replaced by
// "-", as FieldView.id(for:) does), so moving rows means renaming. New rows and language
// versions are copies of the server's <template> elements, and every word this script says
// comes from the server's JSON block: the script holds no markup, field paths or text.

function setUpComposer(form) {
  let strings = {};
  try {
    strings = JSON.parse((document.getElementById("composer-strings") || {}).textContent || "{}");
  } catch (error) {
    strings = {};
  }
  const say = (key, values) => String(strings[key] || "").replace(/\{(\w+)\}/g, (whole, name) => (name in values ? values[name] : whole));
  const numberFormat = new Intl.NumberFormat(document.documentElement.lang || undefined);
  const number = (value) => numberFormat.format(value);

  form.querySelectorAll("[data-no-js-only]").forEach((element) => { element.hidden = true; });
  // Enter in a text field submits with the form's first submit button, which is the hidden
  // "Show this layout's fields": the page already shows them, so don't reload it.
  form.addEventListener("submit", (event) => {
    if (event.submitter && event.submitter.matches("[data-no-js-only]")) event.preventDefault();
  });

  // A polite live region announces what the row buttons did.
  const status = document.createElement("div");
  status.className = "visually-hidden";
  status.setAttribute("role", "status");
  status.setAttribute("aria-live", "polite");
  form.append(status);
  let statusTimer;
  const announce = (message) => {
    status.textContent = "";
    clearTimeout(statusTimer);
    // A fresh text node after a pause, so a repeated message is announced again.
    statusTimer = setTimeout(() => { status.textContent = message; }, 100);
  };

  // ---- Layout: show only the fields the chosen layout uses ----
  const showLayout = (layout) => {
    form.querySelectorAll("[data-layouts]").forEach((element) => {
      const layouts = element.dataset.layouts.split(/\s+/).filter(Boolean);
      if (layouts.length > 0) element.hidden = !layouts.includes(layout); // none listed: every layout
    });
    // Cards have a portrait and a landscape image; the other layouts have one image. (The label's
    // first text only: a language version's label also holds its "own text" mark.)
    form.querySelectorAll("label[data-card-label]").forEach((label) => {
      if (label.firstChild && label.firstChild.nodeType === Node.TEXT_NODE) {
        const words = layout === "card" ? label.dataset.cardLabel : label.dataset.otherLabel;
        label.firstChild.nodeValue = label.firstChild.nodeValue.replace(/^.*?(\s*)$/, words + "$1");
      }
    });
  };
  const chosenLayout = form.querySelector("[data-layout-choice]:checked");
  if (chosenLayout) showLayout(chosenLayout.value);
  form.addEventListener("change", (event) => {
    if (event.target.matches("[data-layout-choice]") && event.target.checked) showLayout(event.target.value);
  });

  // ---- Fields that belong to a radio option (a start date, the days between showings) ----
  // Typing a value chooses its option, so a date is never typed in vain. Choosing another option
  // afterwards is deliberate: the value stays on screen (to come back to) but is not sent, where the
  // server would otherwise say it was entered under the wrong option.
  form.addEventListener("input", (event) => {
    const radio = event.target.dataset && event.target.dataset.chooses && document.getElementById(event.target.dataset.chooses);
    if (radio && event.target.value !== "" && !radio.checked) {
      radio.checked = true;
      announce(say("chose", { option: radio.labels[0] ? radio.labels[0].textContent : radio.value }));
    }
  });
  form.addEventListener("formdata", (event) => {
    form.querySelectorAll("[data-chooses]").forEach((input) => {
      const radio = document.getElementById(input.dataset.chooses);
      if (radio && !radio.checked) event.formData.delete(input.name);
    });
  });

  // ---- Colors: #RRGGBB or #AARRGGBB (alpha first), drawn in the swatch beside the input ----
  const paintSwatch = (input) => {
    const rect = input.parentElement && input.parentElement.querySelector(".swatch rect");
    if (!rect) return;
    const value = input.value.trim();
    let fill = "none";
    let opacity = "1";
    if (/^#([0-9a-f]{6}|[0-9a-f]{8})$/i.test(value)) {
      if (value.length === 9) {
        fill = "#" + value.slice(3);
        opacity = (parseInt(value.slice(1, 3), 16) / 255).toFixed(2);
      } else {
        fill = value;
      }
    }
    rect.setAttribute("fill", fill);
    rect.setAttribute("fill-opacity", opacity);
  };
  form.querySelectorAll("[data-color-input]").forEach(paintSwatch);
  form.addEventListener("input", (event) => {
    if (event.target.matches("[data-color-input]")) paintSwatch(event.target);
  });

  setUpVersions(form, { say, announce });

  // ---- Repeated rows: add, remove and move up in the page ----
  const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const idFor = (path) => "field-" + path.replace(/[^\p{L}\p{N}]/gu, "-");
  const listFor = (path) => Array.from(form.querySelectorAll("[data-rows]")).find((list) => list.dataset.rows === path);
  const rowsOf = (list) => Array.from(list.children).filter((child) => child.hasAttribute("data-row"));
  const ownActions = (row) => Array.from(row.children).find((child) => child.classList.contains("row-actions"));
  const addButtonFor = (path) => Array.from(form.querySelectorAll("[data-row-add]")).find((button) => button.dataset.rowAdd === path);
  const nounOf = (list) => list.dataset.rowNoun || "";
  const templateFor = (name) => Array.from(form.querySelectorAll("template[data-row-template-for]")).find((template) => template.dataset.rowTemplateFor === name);
  const firstControl = (row) => row.querySelector("input:not([type=hidden]), select, textarea");
  const focusFirstControl = (row) => {
    const control = firstControl(row);
    if (control) control.focus();
  };

  // Renames every path (names, button values, data-row*) and every id under `root` that
  // starts with `from` to start with `to` instead, e.g. triggers.2 → triggers.1 also renames
  // triggers.2.filters.0.value. Old → new ids are collected in `renamedIds`.
  const rebase = (root, from, to, renamedIds) => {
    if (from === to) return;
    const path = new RegExp("^" + escapeRegExp(from) + "(?=\\.|$)");
    const id = new RegExp("^" + escapeRegExp(idFor(from)) + "(?=-|$)");
    const newId = idFor(to);
    const renamePath = (value) => value.replace(path, to);
    const renameId = (value) => value.replace(id, newId);
    for (const element of [root, ...root.querySelectorAll("*")]) {
      if (element.hasAttribute("name") && element.name !== "intent") element.setAttribute("name", renamePath(element.getAttribute("name")));
      for (const attribute of ["data-row", "data-rows", "data-row-add"]) {
        if (element.hasAttribute(attribute)) element.setAttribute(attribute, renamePath(element.getAttribute(attribute)));
      }
      if (element.matches("button[name=intent]") && element.value.includes(":")) {
        const [operation, target] = element.value.split(/:(.*)/s);
        element.value = operation + ":" + renamePath(target);
      }
      if (element.id) {
        const renamed = renameId(element.id);
        if (renamed !== element.id) {
          renamedIds.set(element.id, renamed);
          element.id = renamed;
        }
      }
      if (element.hasAttribute("for")) element.setAttribute("for", renameId(element.getAttribute("for")));
      if (element.hasAttribute("aria-describedby")) {
        element.setAttribute("aria-describedby", element.getAttribute("aria-describedby").split(/\s+/).map(renameId).join(" "));
      }
    }
  };

  // The path of a row (`data.3`), read from the first field named under the list's prefix.
  const rowPath = (row, prefix) => {
    const pattern = new RegExp("^(" + escapeRegExp(prefix) + "\\.\\d+)(?=\\.|$)");
    for (const element of row.querySelectorAll("[name]")) {
      const match = pattern.exec(element.getAttribute("name"));
      if (match) return match[1];
    }
    return null;
  };

  const makeUpButton = (path) => {
    const template = templateFor("up-button");
    const button = template && template.content.firstElementChild.cloneNode(true);
    if (button) button.value = "up:" + path;
    return button;
  };

  // Numbers the list's rows 0, 1, 2… in document order, nested lists included, and keeps
  // "Trigger N" legends, "Move up" buttons and the error summary's links in step.
  const renumber = (list) => {
    const prefix = list.dataset.rows;
    const renamedIds = new Map();
    rowsOf(list).forEach((row, index) => {
      const to = prefix + "." + index;
      const from = rowPath(row, prefix);
      if (from) rebase(row, from, to, renamedIds);
      const legend = Array.from(row.children).find((child) => child.tagName === "LEGEND");
      if (legend) legend.textContent = legend.textContent.replace(/\p{Nd}+(?=\P{Nd}*$)/u, number(index + 1));
      if (list.hasAttribute("data-rows-movable")) {
        const actions = ownActions(row);
        const up = actions && Array.from(actions.children).find((child) => child.hasAttribute("data-row-up"));
        if (index === 0 && up) up.remove();
        const made = index > 0 && actions && !up ? makeUpButton(to) : null;
        if (made) actions.insertBefore(made, actions.querySelector(":scope > [data-row-remove]"));
        if (index > 0 && up) up.value = "up:" + to;
      }
    });
    if (renamedIds.size > 0) {
      document.querySelectorAll('.error-summary a[href^="#"]').forEach((link) => {
        const renamed = renamedIds.get(decodeURIComponent(link.hash.slice(1)));
        if (renamed) link.hash = "#" + renamed;
      });
    }
  };

  // Empties a row: values, choices, errors and any nested rows (a trigger kept as the last one).
  const blankRow = (row) => {
    row.querySelectorAll("[data-rows] [data-row]").forEach((nested) => nested.remove());
    row.querySelectorAll(".field-error").forEach((error) => error.remove());
    row.querySelectorAll(".field-invalid").forEach((field) => field.classList.remove("field-invalid"));
    row.querySelectorAll("input, select, textarea").forEach((control) => {
      if (control.type === "hidden") return;
      if (control.type === "checkbox" || control.type === "radio") {
        control.checked = control.defaultChecked = false;
      } else if (control.tagName === "SELECT") {
        Array.from(control.options).forEach((option, index) => { option.defaultSelected = index === 0; });
        control.selectedIndex = 0;
      } else {
        control.defaultValue = "";
        control.value = "";
      }
      control.removeAttribute("aria-invalid");
      const hint = control.id && row.querySelector("#" + CSS.escape(control.id + "-hint"));
      if (hint) control.setAttribute("aria-describedby", hint.id);
      else control.removeAttribute("aria-describedby");
      if (control.matches("[data-color-input]")) paintSwatch(control);
    });
  };

  // A blank row for `list`, copied from the server's template of its kind and renamed to the
  // list's next path. Null: let the server add it.
  const newRowFor = (list) => {
    const template = templateFor(list.dataset.rowTemplate);
    const row = template && template.content.firstElementChild && template.content.firstElementChild.cloneNode(true);
    if (!row) return null;
    rebase(row, template.dataset.rowPath, list.dataset.rows + "." + rowsOf(list).length, new Map());
    row.setAttribute("data-row", list.dataset.rows);
    return row;
  };

  const addRow = (button) => {
    const list = listFor(button.dataset.rowAdd);
    if (!list) return false;
    const row = newRowFor(list);
    if (!row) return false;
    list.append(row);
    renumber(list);
    focusFirstControl(row);
    announce(say("row_added", { noun: nounOf(list), number: number(rowsOf(list).length) }));
    return true;
  };

  // The row a button belongs to, and the list holding it; null when the button is in no list.
  const rowOf = (button) => {
    const row = button.closest("[data-row]");
    const list = row && row.parentElement;
    return list && list.hasAttribute("data-rows") ? { row, list } : null;
  };

  const removeRow = (button) => {
    const found = rowOf(button);
    if (!found) return false;
    const { row, list } = found;
    const rows = rowsOf(list);
    const index = rows.indexOf(row);
    const noun = nounOf(list);
    if (rows.length <= Number(list.dataset.rowsMin || 0)) {
      // The list keeps one row: empty it rather than remove it.
      blankRow(row);
      renumber(list);
      focusFirstControl(row);
      announce(say("row_cleared", { noun, number: number(index + 1) }));
      return true;
    }
    row.remove();
    renumber(list);
    const previous = rowsOf(list)[index - 1];
    const addButton = addButtonFor(list.dataset.rows);
    if (previous) focusFirstControl(previous);
    else if (addButton) addButton.focus();
    announce(say("row_removed", { noun, number: number(index + 1) }));
    return true;
  };

  const moveRowUp = (button) => {
    const found = rowOf(button);
    if (!found) return false;
    const { row, list } = found;
    const rows = rowsOf(list);
    const index = rows.indexOf(row);
    if (index <= 0) return true;
    list.insertBefore(row, rows[index - 1]);
    renumber(list);
    const actions = ownActions(row);
    const up = actions && actions.querySelector(":scope > [data-row-up]");
    if (up) up.focus();
    else focusFirstControl(row);
    announce(say("row_moved", { noun: nounOf(list), number: number(index) }));
    return true;
  };

  form.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-row-add], button[data-row-remove], button[data-row-up]");
    if (!button || !form.contains(button)) return;
    let done = false;
    if (button.hasAttribute("data-row-add")) done = addRow(button);
    else if (button.hasAttribute("data-row-remove")) done = removeRow(button);
    else done = moveRowUp(button);
    if (done) event.preventDefault();
  });
}

// ---- Language versions: tabs, add and remove in the page ----
// The tabs are submit buttons (`intent=language:fa`) the server answers without script; here they
// switch panels in place, with the arrow keys moving between them as WAI-ARIA's tabs pattern says.
// The hidden `preview.language` input names the version shown, which the live preview draws.
function setUpVersions(form, { say, announce }) {
  const tabList = form.querySelector("[data-version-tabs]");
  const current = form.querySelector("[data-version-current]");
  if (!tabList || !current) return;
  const tabs = () => Array.from(tabList.querySelectorAll('[role="tab"]'));
  const panelOf = (tab) => document.getElementById(tab.getAttribute("aria-controls"));
  const nameOf = (element) => {
    const name = element && element.querySelector("[data-version-name]");
    return name ? name.textContent : "";
  };

  const select = (tab, focus) => {
    tabs().forEach((other) => {
      const chosen = other === tab;
      other.setAttribute("aria-selected", chosen ? "true" : "false");
      other.tabIndex = chosen ? 0 : -1;
      const panel = panelOf(other);
      if (panel) panel.hidden = !chosen;
    });
    current.value = tab.dataset.versionTab;
    if (focus) tab.focus();
    // The live preview listens for changes: it now draws this version.
    current.dispatchEvent(new Event("change", { bubbles: true }));
  };
  tabs().forEach((tab) => { tab.tabIndex = tab.getAttribute("aria-selected") === "true" ? 0 : -1; });

  tabList.addEventListener("click", (event) => {
    const tab = event.target.closest('[role="tab"]');
    if (!tab) return;
    event.preventDefault();
    select(tab, false);
  });
  tabList.addEventListener("keydown", (event) => {
    const all = tabs();
    const index = all.indexOf(document.activeElement);
    if (index < 0) return;
    const rightToLeft = getComputedStyle(tabList).direction === "rtl";
    const next = { ArrowRight: rightToLeft ? -1 : 1, ArrowLeft: rightToLeft ? 1 : -1 }[event.key];
    let target = null;
    if (next) target = all[(index + next + all.length) % all.length];
    else if (event.key === "Home") target = all[0];
    else if (event.key === "End") target = all[all.length - 1];
    if (!target) return;
    event.preventDefault();
    select(target, true);
  });

  // A version's empty field shows the default's value it falls back to; a filled one is marked as its own.
  const fallbacksOf = (source) => Array.from(form.querySelectorAll("[data-falls-back-to]")).filter((input) => input.dataset.fallsBackTo === source.id);
  // (Isolated, U+2068 … U+2069, so the default's text reads in its own direction in a right-to-left input.)
  const showFallback = (input, source) => {
    const value = source.value.trim();
    input.placeholder = value ? "\u2068" + value + "\u2069" : source.placeholder;
  };
  const markOverride = (input) => {
    const field = input.closest(".field");
    const mark = field && field.querySelector("[data-override-mark]");
    if (mark) mark.hidden = input.value.trim() === "";
  };
  form.addEventListener("input", (event) => {
    const input = event.target;
    if (input.dataset && input.dataset.fallsBackTo) markOverride(input);
    else if (input.id) fallbacksOf(input).forEach((version) => showFallback(version, input));
  });

  // The error summary links to fields; one in another version's panel shows that version first.
  document.querySelectorAll('.error-summary a[href^="#"]').forEach((link) => {
    link.addEventListener("click", () => {
      const target = document.getElementById(decodeURIComponent(link.hash.slice(1)));
      const panel = target && target.closest("[data-version-panel]");
      const tab = panel && panel.hidden && document.getElementById(panel.getAttribute("aria-labelledby"));
      if (tab) select(tab, false);
    });
  });

  const choice = form.querySelector("[data-version-choice]");
  const other = form.querySelector("[data-version-other]");
  const template = form.querySelector("template[data-version-template]");
  const addButton = form.querySelector("[data-version-add]");
  // The list's options of versions added here, to offer again when such a version is removed.
  const takenOptions = new Map();
  const addVersion = (event) => {
    // A typed tag, or none chosen, goes to the server, which checks it and says what is wrong.
    if (!choice || !template || (other && other.value.trim() !== "")) return;
    const option = choice.selectedOptions[0];
    if (!option || !option.value) return;
    const values = { LANGTAG: option.value, LANGNAME: option.dataset.name || option.value, LANGDIR: option.dataset.dir || "ltr" };
    const fill = (text) => text.replace(/LANGTAG|LANGNAME|LANGDIR/g, (word) => values[word]);
    const fragment = template.content.cloneNode(true);
    for (const element of fragment.querySelectorAll("*")) {
      for (const attribute of Array.from(element.attributes)) {
        const filled = fill(attribute.value);
        if (filled !== attribute.value) element.setAttribute(attribute.name, filled);
      }
    }
    // Words too, not only attributes: the panel's "Remove the … version" button names the language.
    const words = document.createTreeWalker(fragment, NodeFilter.SHOW_TEXT);
    for (let node = words.nextNode(); node; node = words.nextNode()) {
      const filled = fill(node.nodeValue);
      if (filled !== node.nodeValue) node.nodeValue = filled;
    }
    const [tab, panel] = Array.from(fragment.children);
    if (!tab || !panel) return;
    event.preventDefault();
    tabList.append(tab);
    const lastPanel = Array.from(form.querySelectorAll("[data-version-panel]")).pop();
    lastPanel.after(panel);
    panel.querySelectorAll("[data-falls-back-to]").forEach((input) => {
      const source = document.getElementById(input.dataset.fallsBackTo);
      if (source) showFallback(input, source);
    });
    const layout = form.querySelector("[data-layout-choice]:checked");
    panel.querySelectorAll("[data-layouts]").forEach((element) => {
      element.hidden = layout ? !element.dataset.layouts.split(/\s+/).includes(layout.value) : false;
    });
    takenOptions.set(values.LANGTAG, option);
    option.remove();
    choice.selectedIndex = 0;
    select(tab, false);
    const first = panel.querySelector("input:not([type=hidden]):not([hidden])");
    const visible = Array.from(panel.querySelectorAll(".field:not([hidden]) input"))[0] || first;
    if (visible) visible.focus();
    announce(say("version_added", { language: values.LANGNAME }));
  };
  if (addButton) addButton.addEventListener("click", addVersion);

  form.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-version-remove]");
    if (!button) return;
    event.preventDefault();
    if (!window.confirm(button.dataset.confirm || "")) return;
    const panel = button.closest("[data-version-panel]");
    const tab = panel && document.getElementById(panel.getAttribute("aria-labelledby"));
    const name = nameOf(panel);
    const tag = panel && panel.dataset.versionPanel;
    if (tab) tab.remove();
    if (panel) panel.remove();
    if (choice && takenOptions.has(tag)) {
      choice.add(takenOptions.get(tag));
      takenOptions.delete(tag);
    }
    const first = tabs()[0];
    if (first) select(first, true);
    announce(say("version_removed", { language: name }));
  });
}
