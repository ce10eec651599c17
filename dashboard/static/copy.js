// Copy buttons for secrets shown once. Without script the buttons stay
// hidden and the field can still be selected and copied by hand.
"use strict";
document.querySelectorAll("button[data-copy]").forEach(function (button) {
  var field = document.getElementById(button.dataset.copy);
  if (!field) return;
  button.hidden = false;
  button.setAttribute("aria-live", "polite");
  function done() {
    button.textContent = "Copied";
    setTimeout(function () { button.textContent = "Copy"; }, 2000);
  }
  function byHand() {
    field.select();
    try { document.execCommand("copy"); done(); } catch (e) { /* selected: the user copies */ }
  }
  button.addEventListener("click", function () {
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(done, byHand);
    } else {
      byHand();
    }
  });
});
