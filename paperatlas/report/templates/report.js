/* a link to a list of papers opens that list */
function paOpen(){var id=decodeURIComponent(location.hash.slice(1));var el=id&&document.getElementById(id);if(!el)return;var d=el.closest('details');if(d)d.open=true;}
window.addEventListener('hashchange',paOpen);paOpen();
