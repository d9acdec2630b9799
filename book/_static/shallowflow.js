/* Marks every scroll container whose content is wider than it (class sf-scrolls: a visible scrollbar and a
   shadow on the cut edge, see shallowflow.css) and adds a one-line "scroll sideways" hint after it. */
(function () {
  var SEL = '.sf-scroll, .pst-scrollable-table-container, .table-wrapper, .bd-content .output_html, ' +
            '.bd-content div.cell_output .output.text_html, .highlight pre, div.output pre';
  function mark() {
    document.querySelectorAll(SEL).forEach(function (el) {
      var wide = el.scrollWidth > el.clientWidth + 2;
      el.classList.toggle('sf-scrolls', wide);
      var next = el.nextElementSibling;
      var hint = next && next.classList.contains('sf-scroll-hint') ? next : null;
      if (wide && !hint && el.matches('.sf-scroll, .pst-scrollable-table-container, .table-wrapper')) {
        hint = document.createElement('p');
        hint.className = 'sf-scroll-hint';
        hint.textContent = '\u2194 this table is wider than the page: scroll it sideways';
        el.parentNode.insertBefore(hint, el.nextSibling);
      }
      if (hint) { hint.classList.toggle('sf-shown', wide); }
    });
  }
  if (document.readyState === 'loading') { document.addEventListener('DOMContentLoaded', mark); } else { mark(); }
  window.addEventListener('load', mark);
  window.addEventListener('resize', mark);
})();
