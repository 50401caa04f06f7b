// gpucloud console: a sign-in link (gpucloud console) carries the token in its fragment (#token=...), which the
// browser never sends to a server; this puts it in the sign-in form, wipes it from the address bar and history, and
// POSTs the form to /console/session, which verifies it and answers with the session cookie.
(function () {
  'use strict';
  var hash = window.location.hash;
  if (hash.indexOf('#token=') !== 0) {
    return;
  }
  var token = decodeURIComponent(hash.substring('#token='.length));
  window.history.replaceState(null, '', window.location.pathname + window.location.search);
  var form = document.getElementById('login');
  form.elements.token.value = token;
  form.submit();
})();
