// latchkey's passkey script: served from latchkey's own origin, no build
// step, no dependencies. It drives the WebAuthn ceremonies of the sign-in
// page ("Sign in with a passkey", and passkeys offered in the e-mail
// field's autofill where the browser supports it) and of the passkeys page
// ("Add a passkey"). Each ceremony: GET the options (which sets the
// challenge cookie), ask the browser's authenticator, POST the answer with
// the page's csrfToken, follow the {url} answer. Without this script every
// other sign-in method works unchanged; the passkey controls stay hidden.
"use strict";
(function () {
  if (!window.PublicKeyCredential || !navigator.credentials) return;

  function fromB64url(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) s += "=";
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }
  function toB64url(buf) {
    var bytes = new Uint8Array(buf), bin = "";
    for (var i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function decodeList(list) {
    return (list || []).map(function (c) {
      return Object.assign({}, c, { id: fromB64url(c.id) });
    });
  }
  // The server's options are JSON (base64url strings); the browser API
  // wants ArrayBuffers.
  function requestOptions(o) {
    return Object.assign({}, o, { challenge: fromB64url(o.challenge), allowCredentials: decodeList(o.allowCredentials) });
  }
  function creationOptions(o) {
    var user = Object.assign({}, o.user, { id: fromB64url(o.user.id) });
    return Object.assign({}, o, { challenge: fromB64url(o.challenge), user: user, excludeCredentials: decodeList(o.excludeCredentials) });
  }
  // The answer as JSON, as PublicKeyCredential.toJSON() gives it.
  function answerJSON(cred) {
    if (typeof cred.toJSON === "function") return JSON.stringify(cred.toJSON());
    var r = cred.response, resp = { clientDataJSON: toB64url(r.clientDataJSON) };
    if (r.attestationObject) {
      resp.attestationObject = toB64url(r.attestationObject);
      if (r.getTransports) resp.transports = r.getTransports();
    } else {
      resp.authenticatorData = toB64url(r.authenticatorData);
      resp.signature = toB64url(r.signature);
      if (r.userHandle) resp.userHandle = toB64url(r.userHandle);
    }
    return JSON.stringify({
      id: cred.id, rawId: toB64url(cred.rawId), type: cred.type, response: resp,
      authenticatorAttachment: cred.authenticatorAttachment || undefined,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
    });
  }
  // getOptions asks for a ceremony's options, in the page's language. A
  // refusal that names a page to go to (the step-up form, when the
  // session must prove its second factor first) goes there.
  function getOptions(form, action) {
    var lang = form.querySelector("input[name=lang]");
    var q = "?action=" + action + (lang && lang.value ? "&lang=" + encodeURIComponent(lang.value) : "");
    return fetch(form.dataset.optionsUrl + q, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (res) {
        if (res.ok) return res.json();
        return res.json().catch(function () { return {}; }).then(function (j) {
          if (j && typeof j.url === "string" && j.url) {
            window.location.assign(j.url);
            var e = new Error("options: " + res.status);
            e.name = "AbortError"; // leaving the page: no message
            throw e;
          }
          throw new Error("options: " + res.status);
        });
      });
  }
  // post sends the answer like the form would, asking for {url} (json=true).
  function post(form, data) {
    var body = new URLSearchParams(new FormData(form));
    body.set("data", data);
    body.set("json", "true");
    // getAttribute: the form's "action" input shadows form.action.
    return fetch(form.getAttribute("action"), { method: "POST", credentials: "same-origin", body: body })
      .then(function (res) { return res.json(); })
      .then(function (j) { window.location.assign(j.url); });
  }
  // showError shows one of the page's messages (data-msg-* attributes of
  // the error element, in the page's language).
  function showError(which) {
    var el = document.querySelector("[data-passkey-error]");
    if (el) { el.textContent = el.getAttribute("data-msg-" + which) || ""; el.hidden = false; }
  }

  // Sign-in page.
  var signin = document.querySelector("[data-passkey-signin]");
  if (signin) {
    var form = signin.querySelector("form");
    var autofill = null; // the pending conditional request, if any
    signin.hidden = false;
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      if (autofill) autofill.abort();
      getOptions(form, "authenticate")
        .then(function (o) { return navigator.credentials.get({ publicKey: requestOptions(o.options) }); })
        .then(function (cred) { return post(form, answerJSON(cred)); })
        .catch(function (e) { if (e && e.name !== "AbortError") console.warn("passkey sign-in:", e); });
    });
    // Conditional UI: passkeys in the e-mail field's autofill.
    if (PublicKeyCredential.isConditionalMediationAvailable && document.querySelector("input[autocomplete~=webauthn]")) {
      PublicKeyCredential.isConditionalMediationAvailable().then(function (ok) {
        if (!ok) return;
        autofill = new AbortController();
        var signal = autofill.signal;
        return getOptions(form, "authenticate")
          .then(function (o) { return navigator.credentials.get({ publicKey: requestOptions(o.options), mediation: "conditional", signal: signal }); })
          .then(function (cred) { return post(form, answerJSON(cred)); });
      }).catch(function () {});
    }
  }

  // Passkeys page.
  var reg = document.querySelector("[data-passkey-register]");
  if (reg) {
    reg.hidden = false;
    reg.addEventListener("submit", function (ev) {
      ev.preventDefault();
      getOptions(reg, "register")
        .then(function (o) { return navigator.credentials.create({ publicKey: creationOptions(o.options) }); })
        .then(function (cred) { return post(reg, answerJSON(cred)); })
        .catch(function (e) {
          if (e && e.name === "AbortError") return; // on the way to the step-up form
          showError(e && e.name === "NotAllowedError" ? "cancelled" : "failed");
        });
    });
  }
})();
