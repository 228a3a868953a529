// Layout preview. The server draws every preview; this script only asks it to again.
// Without script: the composer's "Preview" button and the pages' "Show" buttons do the same.
document.addEventListener("DOMContentLoaded", () => {
  // ---- Composer: redraw the preview as the marketer types ----
  // The "Preview" button submits the whole form (CSRF token included) to POST /campaigns/preview,
  // targeting the iframe named "preview"; typing presses it for them, debounced. Here each press
  // targets a fresh frame instead (see redrawNow).
  const composer = document.querySelector("form[data-composer]");
  const previewButton = composer && composer.querySelector("[data-preview-submit]");
  if (composer && previewButton && typeof composer.requestSubmit === "function") {
    const DEBOUNCE_MS = 300;
    let timer;
    let pending = null;

    // Each redraw goes to a fresh frame: a first navigation replaces the frame's blank page
    // instead of adding to the session history, so Back still leaves the composer. The fresh
    // frame loads hidden over the shown one, which it replaces once drawn (no flash).
    let frames = 0;
    const redrawNow = () => {
      const shown = document.querySelector('iframe[name="preview"][data-preview-frame]');
      if (!shown) return;
      if (!pending) {
        frames += 1;
        pending = document.createElement("iframe");
        pending.name = "preview-" + frames;
        pending.className = shown.className + " preview-iframe-pending";
        pending.title = shown.title;
        pending.setAttribute("data-preview-frame", "");
        pending.setAttribute("aria-hidden", "true");
        pending.tabIndex = -1;
        pending.style.top = shown.offsetTop + "px";
        pending.style.left = shown.offsetLeft + "px";
        pending.style.width = shown.offsetWidth + "px";
        pending.style.height = shown.offsetHeight + "px";
        shown.after(pending);
        const frame = pending;
        frame.addEventListener("load", () => {
          // (An error page is not readable here; it is shown all the same.)
          if (frame.contentDocument && frame.contentDocument.URL === "about:blank") return;
          if (frame !== pending) return;
          pending = null;
          shown.remove();
          frame.name = "preview";
          frame.classList.remove("preview-iframe-pending");
          frame.removeAttribute("aria-hidden");
          frame.removeAttribute("tabindex");
          frame.removeAttribute("style");
        });
      }
      // The target is read when the form is submitted: point it at the fresh frame just for this.
      previewButton.formTarget = pending.name;
      composer.requestSubmit(previewButton);
      previewButton.formTarget = "preview";
    };
    const redraw = () => {
      clearTimeout(timer);
      timer = setTimeout(redrawNow, DEBOUNCE_MS);
    };
    composer.addEventListener("input", redraw);
    composer.addEventListener("change", redraw);
    // Row buttons change the form without an input event.
    composer.addEventListener("click", (event) => {
      if (event.target.closest("button[data-row-add], button[data-row-remove], button[data-row-up]")) redraw();
    });
    // The "Preview" button itself redraws the same way.
    previewButton.addEventListener("click", (event) => {
      event.preventDefault();
      clearTimeout(timer);
      redrawNow();
    });
    // Draw what the form holds now, rather than the saved version or the blank frame.
    redrawNow();
  }

  // ---- Preview page and gallery: switch device, orientation and theme in place ----
  const switcher = document.querySelector("form[data-preview-switch]");
  if (switcher) {
    const apply = switcher.querySelector("[data-preview-apply]");
    if (apply) apply.hidden = true;
    switcher.addEventListener("change", () => {
      const query = new URLSearchParams(new FormData(switcher)).toString();
      const orientation = new FormData(switcher).get("orientation") || "portrait";
      const frames = document.querySelectorAll("iframe[data-preview-frame], iframe[data-gallery-frame]");
      frames.forEach((frame) => {
        const url = frame.dataset.galleryFrame
          ? "/preview/gallery/frame?layout=" + encodeURIComponent(frame.dataset.galleryFrame) + "&" + query
          : frame.dataset.frameBase + "?" + query;
        frame.classList.toggle("is-landscape", orientation === "landscape");
        frame.classList.toggle("is-portrait", orientation !== "landscape");
        // replace(): switching frames does not add to the session history either.
        frame.contentWindow.location.replace(url);
      });
      history.replaceState(null, "", switcher.action + "?" + query);
    });
  }
});
