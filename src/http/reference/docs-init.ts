/** The page's own start-up script (served from this origin; the CSP allows no inline script). */
export const DOCS_INIT_JS = `
(function () {
  // The operation index (a template in the page) where the renderer shows no sidebar.
  var narrow = window.matchMedia('(max-width: 999px)');
  var slot = document.getElementById('ops-index-slot');
  var template = document.getElementById('ops-index-template');
  function placeIndex() {
    if (!slot || !template) return;
    if (narrow.matches && !slot.firstChild) slot.appendChild(template.content.cloneNode(true));
    if (!narrow.matches) slot.textContent = '';
  }
  placeIndex();
  narrow.addEventListener('change', placeIndex);
  if (!window.Scalar) return;
  window.Scalar.createApiReference('#reference', {
    url: '/openapi.json',
    withDefaultFonts: false,
    telemetry: false,
    hideClientButton: true,
    hideTestRequestButton: true,
    showDeveloperTools: 'never',
    agent: { disabled: true },
    mcp: { disabled: true },
    documentDownloadType: 'json',
    // System fonts: the bundled theme names web fonts on another host, which would never be fetched.
    customCss: ':root,body,.scalar-app,.light-mode,.dark-mode{--scalar-font:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif !important;--scalar-font-code:ui-monospace,SFMono-Regular,Menlo,monospace !important}'
  });
})();
`;
