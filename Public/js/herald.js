// Small enhancements; every page works without them.
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
        button.textContent = "Copied";
      });
    });
  }
});
