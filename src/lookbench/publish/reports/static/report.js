/* The report's images (each stored once, by id), and filters of query cards and confusion rows. */
(function () {
  "use strict";
  var images = JSON.parse(document.getElementById("report-images").textContent);
  Array.prototype.forEach.call(document.querySelectorAll("img[data-img]"), function (img) {
    var uri = images[img.getAttribute("data-img")];
    if (typeof uri === "string" && uri.indexOf("data:image/") === 0) img.src = uri;
  });
  var subset = document.getElementById("filter-subset"), category = document.getElementById("filter-category");
  var sample = document.getElementById("filter-sample");
  function inSample(node) {
    if (!sample || !node.hasAttribute("data-samples")) return true;
    var tags = node.getAttribute("data-samples").split(" ");
    return tags.indexOf(sample.value) >= 0 || (tags.indexOf("example") >= 0 && sample.value === "misses");
  }
  function match(node) {
    return (!subset.value || node.getAttribute("data-subset") === subset.value) &&
      (!category.value || node.getAttribute("data-category") === category.value) && inSample(node);
  }
  function apply() {
    var shown = 0, cards = document.querySelectorAll("article.query");
    Array.prototype.forEach.call(cards, function (card) {
      var ok = match(card);
      card.style.display = ok ? "" : "none";
      if (ok) shown += 1;
    });
    Array.prototype.forEach.call(document.querySelectorAll("table.confusion"), function (table) {
      var inSubset = !subset.value || table.getAttribute("data-subset") === subset.value;
      table.style.display = inSubset ? "" : "none";
      Array.prototype.forEach.call(table.querySelectorAll("tr[data-category]"), function (row) {
        row.style.display = !category.value || row.getAttribute("data-category") === category.value ? "" : "none";
      });
    });
    document.getElementById("shown-count").textContent = shown + " of " + cards.length + " queries shown";
    Array.prototype.forEach.call(document.querySelectorAll("#sample-rule span[data-sample]"), function (span) {
      span.hidden = !sample || span.getAttribute("data-sample") !== sample.value;
    });
  }
  /* An example link to a card the filters hide clears the filters first, so the link always lands. */
  function reveal() {
    var target = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
    if (target && target.matches("article.query") && target.style.display === "none") {
      subset.value = "";
      category.value = "";
      if (sample) sample.value = "misses";
      apply();
      target.scrollIntoView();
    }
  }
  subset.addEventListener("change", apply);
  if (sample) sample.addEventListener("change", apply);
  category.addEventListener("change", apply);
  window.addEventListener("hashchange", reveal);
  apply();
  reveal();
})();
