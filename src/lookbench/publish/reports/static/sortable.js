/* Sortable static tables: a click on a column title sorts the rows of each tbody by that column (numbers as
   numbers, else text); a tbody's leading group row (tr.group-row) stays on top. Used by tables the page does
   not re-render: the report's tables and the leaderboard's published block. */
(function () {
  "use strict";
  function cellValue(row, index) {
    var cell = row.children[index];
    return cell ? cell.textContent.trim() : "";
  }
  function numeric(text) {
    var match = /^[-+]?\d[\d,]*(\.\d+)?/.exec(text);
    return match ? Number(match[0].replace(/,/g, "")) : null;
  }
  function sortBy(table, index, dir) {
    var bodies = table.tBodies.length ? table.tBodies : [table];
    Array.prototype.forEach.call(bodies, function (body) {
      var rows = Array.prototype.filter.call(body.rows, function (r) { return !r.classList.contains("group-row") && r.parentNode === body && r.querySelector("td"); });
      var nums = rows.map(function (r) { return numeric(cellValue(r, index)); });
      var allNumbers = nums.every(function (n) { return n !== null; });
      var order = rows.map(function (r, i) { return i; }).sort(function (a, b) {
        var c = allNumbers ? nums[a] - nums[b] : cellValue(rows[a], index).localeCompare(cellValue(rows[b], index));
        return (dir === "asc" ? c : -c) || a - b;
      });
      order.forEach(function (i) { body.appendChild(rows[i]); });
    });
  }
  function sortable(table) {
    var head = table.tHead ? table.tHead.rows[0] : table.rows[0];
    if (!head || table.getAttribute("data-sortable") === "1") return;
    table.setAttribute("data-sortable", "1");
    Array.prototype.forEach.call(head.cells, function (th, index) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      var arrow = document.createElement("span");
      arrow.className = "arrow";
      arrow.setAttribute("aria-hidden", "true");
      arrow.textContent = " \u21c5";
      button.appendChild(arrow);
      th.appendChild(button);
      button.addEventListener("click", function () {
        var dir = th.getAttribute("aria-sort") === "descending" ? "asc" : "desc";
        Array.prototype.forEach.call(head.cells, function (other) {
          other.removeAttribute("aria-sort");
          var a = other.querySelector(".arrow");
          if (a) a.textContent = " \u21c5";
        });
        th.setAttribute("aria-sort", dir === "asc" ? "ascending" : "descending");
        arrow.textContent = dir === "asc" ? " \u25b2" : " \u25bc";
        sortBy(table, index, dir);
      });
    });
  }
  window.lookbenchSortable = sortable;
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), sortable);
})();
