(function () {
  var table = document.getElementById('fleet-index');
  if (!table) { return; }
  var body = table.tBodies[0];
  var text = document.getElementById('filter-text');
  var cls = document.getElementById('filter-class');
  // present only when a drive's health was read
  var health = document.getElementById('filter-health');
  var shown = document.getElementById('shown');
  function apply() {
    var q = text.value.toLowerCase(), c = cls.value, h = health ? health.value : '', n = 0;
    for (var i = 0; i < body.rows.length; i++) {
      var row = body.rows[i];
      var ok = (!c || row.getAttribute('data-class') === c) &&
               (!h || row.getAttribute('data-health') === h) &&
               (!q || row.textContent.toLowerCase().indexOf(q) >= 0);
      row.hidden = !ok;
      if (ok) { n++; }
    }
    shown.textContent = n;
  }
  function sortBy(col, numeric) {
    var rows = Array.prototype.slice.call(body.rows);
    var dir = table.getAttribute('data-sort') === String(col) ? -1 : 1;
    table.setAttribute('data-sort', dir === 1 ? String(col) : '');
    rows.sort(function (a, b) {
      var x = a.cells[col].getAttribute('data-v'), y = b.cells[col].getAttribute('data-v');
      if (numeric) { x = parseFloat(x); y = parseFloat(y); x = isNaN(x) ? -1 : x; y = isNaN(y) ? -1 : y; }
      return (x < y ? -1 : x > y ? 1 : 0) * dir;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  var heads = table.tHead.rows[0].cells;
  for (var i = 0; i < heads.length; i++) {
    (function (col, numeric) {
      heads[col].addEventListener('click', function () { sortBy(col, numeric); });
    })(i, heads[i].getAttribute('data-numeric') === '1');
  }
  text.addEventListener('input', apply);
  cls.addEventListener('change', apply);
  if (health) { health.addEventListener('change', apply); }
  // the filter from the address (#class=SHOE-SHINING&health=CLEAN&q=lto-9), on load and when a link on the page
  // sets it
  function fromHash() {
    var hash = decodeURIComponent(window.location.hash.replace(/^#/, ''));
    hash.split('&').forEach(function (pair) {
      var kv = pair.split('=');
      if (kv[0] === 'class') { cls.value = kv[1] || ''; }
      if (kv[0] === 'q') { text.value = kv[1] || ''; }
      if (kv[0] === 'health' && health) { health.value = kv[1] || ''; }
    });
    apply();
  }
  window.addEventListener('hashchange', fromHash);
  fromHash();
})();
