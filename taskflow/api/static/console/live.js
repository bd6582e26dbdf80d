// The console's live pages: the inbox (inboxChanged) and a slot's page (slotChanged), GraphQL
// subscriptions over graphql-transport-ws at /console/live (the session cookie authenticates
// it), and the SLA countdown. Hand-written, no dependencies: the protocol needs five message
// types.
(function () {
  "use strict";
  var body = document.querySelector("table.inbox tbody");
  var notice = document.getElementById("live");
  var page = document.querySelector("[data-now]");
  var slotPage = document.querySelector("[data-slot-page]");
  if (!page && !slotPage) return;
  // The server's clock, not the browser's, decides what is overdue.
  var skew = page ? Date.parse(page.getAttribute("data-now")) - Date.now() : 0;

  function say(text) { if (notice) notice.textContent = text; }

  function remaining(ms) {
    var s = Math.floor(Math.abs(ms) / 1000), d = Math.floor(s / 86400);
    var h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
    var text = d ? d + "d " + h + "h" : h + "h " + (m < 10 ? "0" : "") + m + "m";
    return ms < 0 ? "overdue by " + text : text + " left";
  }

  function tick() {
    var now = Date.now() + skew;
    document.querySelectorAll("time[data-due]").forEach(function (t) {
      var left = Date.parse(t.getAttribute("datetime")) - now;
      t.textContent = remaining(left);
      t.parentNode.className = left < 0 ? "due-late" : left < 3600000 ? "due-soon" : "";
    });
  }
  setInterval(tick, 15000);

  function row(globalId) {
    var rows = document.querySelectorAll("tr[data-id]");
    for (var i = 0; i < rows.length; i++) if (rows[i].getAttribute("data-id") === globalId) return rows[i];
    return null;
  }

  function changed(change) {
    var found = row(change.slotId);
    if (!change.slot) {
      if (found) { found.remove(); say("A slot left your inbox (taken elsewhere, or done)."); }
      return;
    }
    if (found) {
      var status = found.querySelector("[data-status]");
      if (status && change.slot.holder) {
        // The holder's login is not in the change; someone took it (ours: the page reloads).
        status.textContent = "claimed";
      }
    } else {
      say("New work arrived: reload to see it.");
    }
  }

  // A slot's page: someone else claimed, released, handed over or completed the slot.
  function slotChanged(change) {
    var shown = Number(slotPage.getAttribute("data-version"));
    var status = document.getElementById("status");
    if (!change.slot) {
      say("This slot is no longer yours to see or act on: reload.");
      return;
    }
    if (change.slot.version === shown) return;
    var me = slotPage.getAttribute("data-me"), holder = change.slot.holder;
    var text = change.slot.status.toLowerCase();
    if (holder) text += ", held by " + (holder === me ? "you" : holder);
    if (status) status.textContent = text;
    slotPage.setAttribute("data-changed", "true");
    say("This slot changed (" + text + "): reload before acting on it.");
  }

  var subscription = slotPage ? {
    query: "subscription($id: ID!, $after: String) { slotChanged(id: $id, after: $after) " +
           "{ cursor slotId slot { id holder status version } } }",
    field: "slotChanged", handle: slotChanged, id: slotPage.getAttribute("data-id")
  } : {
    query: "subscription($after: String) { inboxChanged(after: $after) " +
           "{ cursor slotId slot { id holder status } } }",
    field: "inboxChanged", handle: changed, id: null
  };

  var cursor = null, wait = 500;
  function connect() {
    var scheme = location.protocol === "https:" ? "wss:" : "ws:";
    var socket = new WebSocket(scheme + "//" + location.host + "/console/live", "graphql-transport-ws");
    socket.onopen = function () { socket.send(JSON.stringify({ type: "connection_init", payload: {} })); };
    socket.onmessage = function (event) {
      var message = JSON.parse(event.data);
      if (message.type === "connection_ack") {
        wait = 500;
        document.documentElement.setAttribute("data-live", "on");
        var variables = { after: cursor };
        if (subscription.id) variables.id = subscription.id;
        socket.send(JSON.stringify({ id: "live", type: "subscribe", payload: {
          query: subscription.query, variables: variables } }));
      } else if (message.type === "ping") {
        socket.send(JSON.stringify({ type: "pong" }));
      } else if (message.type === "next" && message.payload.data) {
        var change = message.payload.data[subscription.field];
        cursor = change.cursor;
        subscription.handle(change);
      }
    };
    socket.onclose = function (event) {
      document.documentElement.setAttribute("data-live", "off");
      if (event.code === 4401 || event.code === 4403) { say("Signed out: reload to sign in."); return; }
      setTimeout(connect, wait);
      wait = Math.min(wait * 2, 30000);
    };
  }
  if (body || slotPage) connect();
})();
