/* Filter the report's query cards and confusion rows by subset and category. */
(function () {
  "use strict";
  var subset = document.getElementById("filter-subset"), category = document.getElementById("filter-category");
  function match(node) {
    return (!subset.value || node.getAttribute("data-subset") === subset.value) &&
      (!category.value || node.getAttribute("data-category") === category.value);
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
  }
  subset.addEventListener("change", apply);
  category.addEventListener("change", apply);
  apply();
})();
