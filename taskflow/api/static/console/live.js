// The console's live pages: the inbox (inboxChanged), a slot's page (slotChanged), a board
// (boardChanged) and a run's page (runChanged), GraphQL subscriptions over
// graphql-transport-ws at /console/live (the session cookie authenticates it), and the SLA
// countdown. The inbox and a board patch the one card a message names (/console/cards/...);
// a run's page re-reads its live parts. Hand-written, no dependencies: the protocol needs
// five message types.
(function () {
  "use strict";
  var body = document.querySelector("table.inbox tbody");
  var notice = document.getElementById("live");
  var page = document.querySelector("[data-now]");
  var slotPage = document.querySelector("[data-slot-page]");
  var boardPage = document.querySelector("[data-board-page]");
  var runPage = document.querySelector("[data-run-page]");
  if (!page && !slotPage && !boardPage && !runPage) return;
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

  // One card a message names, as the server renders it now (/console/cards/...: the same
  // session and rules as the page), handed to place(html), or place(null) when it is no
  // longer on this page; the other cards stay the nodes they are. An answer overtaken by a
  // later message for the same card is dropped; a failed read falls back to fallback().
  var asked = {};
  function card(url, key, place, fallback) {
    var n = (asked[key] || 0) + 1;
    asked[key] = n;
    fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        if (asked[key] !== n) return null;
        if (response.status === 401) { say("Signed out: reload to sign in."); return null; }
        if (response.status === 204 || response.status === 404) { place(null); return null; }
        if (!response.ok) return Promise.reject(response.status);
        return response.text().then(function (html) { if (asked[key] === n) place(html); });
      })
      .catch(fallback);
  }

  function parsed(html) {
    var holder = document.createElement("template");
    holder.innerHTML = html.trim();
    return holder.content.firstElementChild;
  }

  // The first of nodes (not skip) whose data-order sorts after order: the new one goes
  // before it (null: at the end).
  function after(nodes, order, skip) {
    for (var i = 0; i < nodes.length; i++) {
      if (nodes[i] !== skip && nodes[i].getAttribute("data-order") > order) return nodes[i];
    }
    return null;
  }

  // The inbox: the row of the slot that changed, put where the page's sort puts it.
  var table = document.querySelector("table.inbox");
  function placeRow(slotId, html) {
    var old = row(slotId), empty = document.getElementById("empty");
    if (!html) {
      if (old) { old.remove(); say("A slot left your inbox (taken elsewhere, or done)."); }
      return;
    }
    var fresh = parsed(html), order = fresh.getAttribute("data-order");
    var before = after(body.querySelectorAll("tr[data-id]"), order, old);
    if (!before && table.getAttribute("data-more")) {
      // Its place is on a later page of the inbox.
      if (old) old.remove();
      say("A slot moved further down your inbox: see the next page.");
      return;
    }
    if (old) old.remove();
    body.insertBefore(fresh, before);
    table.hidden = false;
    if (empty) empty.hidden = true;
    tick();
    say(old ? "A slot in your inbox changed." : "New work arrived: it is in the list.");
  }

  function changed(change) {
    if (!change.slot) { placeRow(change.slotId, null); return; }
    var sort = table.getAttribute("data-sort") || "urgency";
    card("/console/cards/slot/" + encodeURIComponent(change.slotId) + "?sort=" + sort,
         change.slotId, function (html) { placeRow(change.slotId, html); },
         function () { say("Your inbox changed: reload to see it."); });
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

  // A board or a run's page: re-read the page as the server renders it now and swap its live
  // parts ([data-live-part], by id): cards change lane, states, moves and timelines refresh.
  // The server stays the one place that decides lanes and legal moves. Changes that arrive
  // while a re-read is running fold into one more re-read.
  var reading = false, again = false;
  function refresh(stale) {
    if (reading) { again = true; return; }
    reading = true;
    fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html"), kept = false;
        var typing = document.activeElement;
        document.querySelectorAll("[data-live-part]").forEach(function (part) {
          // A move's input someone is filling in is not wiped: that part waits for a reload.
          if (part.contains(typing) && typing.value) { kept = true; return; }
          var now = fresh.getElementById(part.id);
          if (now) part.replaceWith(document.adoptNode(now));
        });
        say(kept ? "This page changed elsewhere: reload before making the move you are " +
                   "filling in (it may no longer apply)." : stale);
      })
      .catch(function () { say("This page changed elsewhere: reload before acting on it."); })
      .then(function () {
        reading = false;
        if (again) { again = false; refresh(stale); }
      });
  }

  // A board: the card of the run that changed, in its lane (its state) at its place (the
  // order runs started); a card someone is filling a move in on waits for a reload.
  var board = document.getElementById("lanes");
  function recount(lane) {
    var n = lane.querySelectorAll("article.card").length, none = lane.querySelector("[data-empty]");
    var count = lane.querySelector("[data-count]");
    if (count) count.textContent = "(" + n + ")";
    if (n && none) none.remove();
    if (!n && !none) {
      none = document.createElement("p");
      none.className = "muted";
      none.setAttribute("data-empty", "");
      none.textContent = "No runs here.";
      lane.appendChild(none);
    }
  }

  function placeCard(runId, html) {
    var old = board.querySelector('article.card[data-id="' + CSS.escape(runId) + '"]');
    var from = old ? old.closest("section.lane") : null, typing = document.activeElement;
    if (old && old.contains(typing) && typing.value) {
      say("This run changed elsewhere: reload before making the move you are filling in " +
          "(it may no longer apply).");
      return;
    }
    var fresh = html ? parsed(html) : null;
    var lane = fresh && board.querySelector('section.lane[data-lane="' +
                                           CSS.escape(fresh.getAttribute("data-state")) + '"]');
    var before = lane ? after(lane.querySelectorAll("article.card"), fresh.getAttribute("data-order"), old) : null;
    if (old) old.remove();
    if (lane && (before || !board.getAttribute("data-more"))) {
      lane.insertBefore(fresh, before || lane.querySelector("[data-empty]"));
      recount(lane);
      say("A run on this board changed elsewhere (now " + fresh.getAttribute("data-state") +
          "); a move you were about to make may no longer apply.");
    } else {
      say(old ? "A run left this board's page." : "");
    }
    if (from && from !== lane) recount(from);
  }

  function boardChanged(change) {
    var ended = board.getAttribute("data-ended") ? "1" : "0";
    card("/console/cards/run/" + encodeURIComponent(change.runId) + "?ended=" + ended,
         change.runId, function (html) { placeCard(change.runId, html); },
         function () {
           refresh("A run on this board changed elsewhere: the board was refreshed; " +
                   "a move you were about to make may no longer apply.");
         });
  }

  function runChanged(change) {
    if (!change.run) { say("This run is no longer yours to see or act on: reload."); return; }
    refresh("This run changed elsewhere (now " + change.run.state + "): its state, moves " +
            "and timeline were refreshed; check a move before making it.");
  }

  var subscription = boardPage ? {
    query: "subscription($workflow: String!, $after: String) { boardChanged(workflow: $workflow, " +
           "after: $after) { cursor runId } }",
    field: "boardChanged", handle: boardChanged, variables: { workflow: boardPage.getAttribute("data-board-page") }
  } : runPage ? {
    query: "subscription($id: ID!, $after: String) { runChanged(id: $id, after: $after) " +
           "{ cursor runId run { id state } } }",
    field: "runChanged", handle: runChanged, variables: { id: runPage.getAttribute("data-id") }
  } : slotPage ? {
    query: "subscription($id: ID!, $after: String) { slotChanged(id: $id, after: $after) " +
           "{ cursor slotId slot { id holder status version } } }",
    field: "slotChanged", handle: slotChanged, variables: { id: slotPage.getAttribute("data-id") }
  } : {
    query: "subscription($after: String) { inboxChanged(after: $after) " +
           "{ cursor slotId slot { id holder status } } }",
    field: "inboxChanged", handle: changed, variables: {}
  };

  function expired(errors) {
    return (errors || []).some(function (e) { return e.extensions && e.extensions.code === "CURSOR_EXPIRED"; });
  }

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
        var variables = Object.assign({ after: cursor }, subscription.variables);
        socket.send(JSON.stringify({ id: "live", type: "subscribe", payload: {
          query: subscription.query, variables: variables } }));
      } else if (message.type === "ping") {
        socket.send(JSON.stringify({ type: "pong" }));
      } else if (message.type === "next" && message.payload.data) {
        var change = message.payload.data[subscription.field];
        cursor = change.cursor;
        subscription.handle(change);
      } else if (message.type === "error" && expired(message.payload)) {
        // Away longer than the server's resume window: the page is read again and the
        // stream starts afresh from it (a board or run swaps its parts, others reload).
        cursor = null;
        if (boardPage || runPage) {
          refresh("You were away long: this page was read again.");
          socket.send(JSON.stringify({ id: "live", type: "subscribe", payload: {
            query: subscription.query, variables: subscription.variables } }));
        } else {
          say("You were away long: reloading.");
          location.reload();
        }
      }
    };
    socket.onclose = function (event) {
      document.documentElement.setAttribute("data-live", "off");
      if (event.code === 4401 || event.code === 4403) { say("Signed out: reload to sign in."); return; }
      setTimeout(connect, wait);
      wait = Math.min(wait * 2, 30000);
    };
  }
  if (body || slotPage || boardPage || runPage) connect();
})();
