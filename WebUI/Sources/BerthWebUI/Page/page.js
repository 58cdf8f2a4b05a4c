// Berth's page: it keeps the host's state as the server sends it (a whole state on
// connect, then patches) and builds every view with createElement and textContent, so a
// plugin's text is never parsed as markup. Served as a file: the page's policy allows no
// inline script.
"use strict";
(() => {
  const token = new URLSearchParams(location.search).get("token") || "";
  const $ = (id) => document.getElementById(id);
  let state = null;
  let version = 0;
  let socket = null;
  let retry = 0;
  let nextRequest = 1;
  const pending = new Map();
  // Elements of the views on the page, by screen and identity.
  let views = new Map();
  // undefined until the first render, so that render focuses its heading too.
  let shownScreen;
  // What tests and the W2 benchmark read: each request's time from send to its patch
  // applied to the DOM, in milliseconds.
  const probe = { timings: [], version: () => version, connected: false, patches: 0, states: 0, state: () => state, send: (command) => send(command),
    // Drops the connection as a network would (the page reconnects by itself).
    dropConnection: () => socket && socket.close() };
  window.berthPage = probe;

  function connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    socket = new WebSocket(`${scheme}//${location.host}/ws?token=${encodeURIComponent(token)}`);
    socket.onopen = () => { retry = 0; probe.connected = true; setConnection("live"); };
    socket.onmessage = (event) => receive(JSON.parse(event.data));
    socket.onclose = () => {
      probe.connected = false;
      setConnection("reconnecting…");
      // A dropped connection comes back by itself; the server then sends the whole state.
      setTimeout(connect, Math.min(200 * 2 ** retry++, 3000));
    };
  }

  function setConnection(text) { $("connection").textContent = text; }

  function send(command) {
    if (!socket || socket.readyState !== WebSocket.OPEN) { showMessage("error: not connected to the host"); return; }
    command.request = nextRequest++;
    pending.set(command.request, performance.now());
    socket.send(JSON.stringify(command));
  }

  function receive(message) {
    switch (message.kind) {
      case "state":
        state = message.state;
        version = message.version;
        probe.states++;
        renderAll();
        break;
      case "patch":
        applyPatch(message);
        probe.patches++;
        break;
      case "done": {
        const started = pending.get(message.request);
        pending.delete(message.request);
        if (started !== undefined) probe.timings.push(performance.now() - started);
        showMessage(message.error ? `error: ${message.error}` : null);
        break;
      }
    }
  }

  function applyPatch(patch) {
    version = patch.version;
    let screens = false;
    if (patch.screens !== undefined) { state.screens = patch.screens; screens = true; }
    if (patch.back !== undefined) { state.back = patch.back; screens = true; }
    if (patch.routes !== undefined) { state.routes = patch.routes; screens = screens || state.screens.length === 0; }
    if (screens) renderScreens();
    if (patch.nodes) for (const change of patch.nodes) replaceNode(change.screen, change.node);
    if (patch.plugins !== undefined) { state.plugins = patch.plugins; renderPlugins(); }
    if (patch.reload !== undefined) { state.reload = patch.reload; renderReload(); }
    if (patch.banner !== undefined) { state.banner = patch.banner; renderBanner(); }
    if (patch.events) {
      state.events = state.events.concat(patch.events).slice(-200);
      appendEvents(patch.events);
    }
  }

  function renderAll() {
    renderScreens();
    renderPlugins();
    renderReload();
    renderBanner();
    $("events").replaceChildren();
    appendEvents(state.events);
  }

  // ---- Elements ----

  function element(tag, options = {}, children = []) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(options)) {
      if (value === undefined || value === null) continue;
      if (key === "text") node.textContent = value;
      else if (key === "className") node.className = value;
      else if (key === "on") for (const [type, handler] of Object.entries(value)) node.addEventListener(type, handler);
      else if (key in node && typeof value !== "string") node[key] = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) node.append(child);
    return node;
  }

  function showMessage(text) {
    const box = $("message");
    box.textContent = text || "";
    box.hidden = !text;
  }

  // ---- Screens ----

  function frontStart(screens) {
    let start = 0;
    screens.forEach((screen, index) => { if (screen.presented) start = index; });
    return start;
  }

  function focusKeyOf(node) {
    for (let current = node; current && current !== document.body; current = current.parentElement) {
      if (current.dataset && current.dataset.focusKey) return current.dataset.focusKey;
    }
    return null;
  }

  function renderScreens() {
    const active = document.activeElement;
    const key = active ? focusKeyOf(active) : null;
    const typed = typedInto(active);
    views = new Map();
    const main = $("main");
    const screens = state.screens;
    const back = $("back");
    back.hidden = !state.back;
    back.textContent = { back: "Back", dismiss: "Dismiss", close: "Close" }[state.back] || "Back";
    $("path").replaceChildren(...screens.map((screen, index) => element("li", {
      "aria-current": index === screens.length - 1 ? "page" : null,
      className: screen.presented ? "presented" : null,
      text: screenName(screen),
    })));
    if (screens.length === 0) {
      document.title = "Berth";
      main.replaceChildren(startList());
      focusNewScreen(null, main);
    } else {
      const start = frontStart(screens);
      const visible = screens[screens.length - 1];
      const parts = [];
      if (start > 0) {
        // The opener stays under its modal, out of reach until the modal is dismissed.
        const opener = screenSection(screens[start - 1], false);
        opener.classList.add("backdrop");
        opener.inert = true;
        parts.push(opener);
        const dialog = element("div", { className: "modal", role: "dialog", "aria-modal": "true", "aria-labelledby": `title-${visible.id}` },
          [screenSection(visible, true)]);
        parts.push(element("div", { className: "scrim" }, [dialog]));
      } else {
        parts.push(screenSection(visible, true));
      }
      document.title = `${screenName(visible)} · Berth`;
      main.replaceChildren(...parts);
      focusNewScreen(visible.id, main);
    }
    if (key) {
      const again = document.querySelector(`[data-focus-key="${CSS.escape(key)}"]`);
      if (again && shownScreenUnchanged) {
        again.focus();
        keepTyped(again, typed);
      }
    }
  }

  // A text field the person is typing in keeps what they typed when it is drawn again: the
  // host's tree can be older than their last key (it answers an earlier input, or arrives
  // whole after a reconnect). Leaving the field shows the host's text (its blur handler).
  function typedInto(field) {
    if (!field || field.tagName !== "INPUT" || field.type !== "text") return null;
    return { value: field.value, start: field.selectionStart, end: field.selectionEnd };
  }

  // ... but only while the host's text is one the page itself sent for that field: a text it
  // never sent is the host's own change (another client typed, a reload reset the state),
  // and the field shows it.
  function keepTyped(field, typed) {
    if (!typed || field.tagName !== "INPUT" || field.type !== "text") return;
    if (hostChangedText(field.dataset.focusKey, field.value)) return;
    field.value = typed.value;
    field.setSelectionRange(typed.start, typed.end);
  }

  // The texts the page sent for each text field (by focus key) since the host last showed
  // the field's latest one.
  const sentTexts = new Map();
  function noteSent(key, text) {
    const sent = sentTexts.get(key) || [];
    sent.push(text);
    if (sent.length > 500) sent.shift();
    sentTexts.set(key, sent);
  }
  function hostChangedText(key, hostText) {
    const sent = sentTexts.get(key);
    if (!sent || sent.length === 0) return true;
    // The host caught up with the last key: nothing older is still on its way.
    if (sent[sent.length - 1] === hostText) { sentTexts.set(key, [hostText]); return false; }
    return !sent.includes(hostText);
  }

  let shownScreenUnchanged = true;
  // A new screen in front takes focus on its heading, so Tab starts at its first control.
  function focusNewScreen(id, main) {
    shownScreenUnchanged = id === shownScreen;
    if (shownScreenUnchanged) return;
    shownScreen = id;
    const heading = main.querySelector(id === null ? "h1" : `#title-${id}`);
    if (heading) heading.focus();
  }

  function screenName(screen) {
    return screen.title ? `${screen.title} (${screen.route})` : screen.route;
  }

  function startList() {
    const routes = state.routes;
    const section = element("section", { className: "start", "aria-labelledby": "start-title" }, [
      element("h1", { id: "start-title", tabindex: "-1", text: "Open a screen" }),
    ]);
    if (routes.length === 0) {
      section.append(element("p", { text: "No plugin offers a screen. Drop plugins into the plugins folder." }));
      return section;
    }
    section.append(element("ul", { className: "routes" }, routes.map((route) => element("li", {}, [
      element("button", { type: "button", text: route, "data-focus-key": `route:${route}`, on: { click: () => send({ op: "open", route }) } }),
      element("button", { type: "button", className: "secondary", text: "Present", "aria-label": `Present ${route}`, "data-focus-key": `present:${route}`,
        on: { click: () => send({ op: "present", route }) } }),
    ]))));
    return section;
  }

  function screenSection(screen, live) {
    const heading = element("h1", { id: live ? `title-${screen.id}` : null, tabindex: "-1", text: screen.title || screen.route });
    const section = element("section", { className: "screen", "data-screen": String(screen.id), "aria-labelledby": live ? `title-${screen.id}` : null,
      "aria-busy": screen.busy ? "true" : null }, [
      heading,
      element("p", { className: "route", text: `${screen.route} · screen ${screen.id}${screen.busy ? " · busy…" : ""}` }),
    ]);
    if (screen.tree) {
      section.append(element("div", { className: "views" }, [buildNode(screen.tree, screen.id)]));
    } else {
      section.append(element("p", { className: "note", text: screen.actions.length ? "This screen shows no views; its actions are below." : "This screen shows no views." }));
    }
    if (screen.actions.length) section.append(actionsList(screen));
    return section;
  }

  function actionsList(screen) {
    return element("section", { className: "actions", "aria-label": "Actions" }, [
      element("h2", { text: "Actions" }),
      element("ul", {}, screen.actions.map((action) => {
        const takesText = (action.summary || "").includes("TEXT");
        const item = element("li");
        if (takesText) {
          const id = `action-${screen.id}-${action.name}`;
          const input = element("input", { type: "text", id, "data-focus-key": `action-text:${action.name}` });
          const go = () => send({ op: "action", screen: screen.id, action: action.name, text: input.value });
          input.addEventListener("keydown", (event) => { if (event.key === "Enter") go(); });
          item.append(element("label", { for: id, text: action.summary }), input,
            element("button", { type: "button", text: action.name, "data-focus-key": `action:${action.name}`, on: { click: go } }));
        } else {
          item.append(element("button", { type: "button", text: action.name, title: action.summary, "data-focus-key": `action:${action.name}`,
            on: { click: () => send({ op: "action", screen: screen.id, action: action.name }) } }));
          if (action.summary) item.append(element("span", { className: "summary", text: ` ${action.summary}` }));
        }
        return item;
      })),
    ]);
  }

  // ---- Views ----

  function input(screen, node, kind, value) {
    const command = { op: "input", screen, view: node.id, input: kind };
    if (value !== undefined) command.value = String(value);
    send(command);
  }

  function styled(el, node) {
    const f = node.fields;
    if (f.emphasis) for (const word of f.emphasis.split(" ")) if (/^[a-z]+$/.test(word)) el.classList.add(`s-${word}`);
    if (f.foreground && /^[a-z]+$/.test(f.foreground)) el.classList.add(`fg-${f.foreground}`);
    if (f.border === "true") el.classList.add("bordered");
    const padding = parseInt(f.padding || "0", 10);
    if (padding > 0) el.style.padding = `${Math.min(padding, 16) * 0.5}em ${Math.min(padding, 16)}ch`;
    return el;
  }

  function buildNode(node, screen) {
    const f = node.fields;
    const key = `view:${node.id}`;
    let el;
    switch (node.type) {
      case "VStack": el = element("div", { className: "vstack" }, node.children.map((child) => buildNode(child, screen))); break;
      case "HStack": el = element("div", { className: "hstack" }, node.children.map((child) => buildNode(child, screen))); break;
      case "List": el = element("ul", { className: "list" }, node.children.map((child) => element("li", {}, [buildNode(child, screen)]))); break;
      case "Text": el = element("span", { className: "text", text: f.text || "" }); break;
      case "Button":
        el = element("button", { type: "button", text: f.label || "", "data-focus-key": key, on: { click: () => input(screen, node, "tap") } });
        break;
      case "Toggle": {
        const box = element("input", { type: "checkbox", checked: f.isOn === "true", "data-focus-key": key,
          on: { change: () => input(screen, node, "toggle") } });
        el = element("label", { className: "toggle" }, [box, element("span", { text: f.label || "" })]);
        break;
      }
      case "TextField": {
        const field = element("input", { type: "text", value: f.text || "", "data-focus-key": key, "aria-label": f.label || node.id,
          on: { input: (event) => { noteSent(key, event.target.value); input(screen, node, "type", event.target.value); }, blur: (event) => { const n = currentNode(screen, node.id); if (n && event.target.value !== (n.fields.text || "")) event.target.value = n.fields.text || ""; } } });
        el = element("label", { className: "field" }, [element("span", { className: "label", text: f.label || "" }), field]);
        break;
      }
      case "Stepper": {
        const label = f.label || "";
        el = element("div", { className: "stepper", role: "group", "aria-label": label }, [
          element("span", { className: "label", text: label }),
          element("button", { type: "button", text: "−", "aria-label": `Decrease ${label}`, "data-focus-key": `${key}:down`,
            on: { click: () => input(screen, node, "step", "-") } }),
          element("output", { text: f.value || "0", "aria-live": "polite" }),
          element("button", { type: "button", text: "+", "aria-label": `Increase ${label}`, "data-focus-key": `${key}:up`,
            on: { click: () => input(screen, node, "step", "+") } }),
        ]);
        break;
      }
      case "Picker": {
        const name = `picker-${screen}-${node.id}`;
        const selected = parseInt(f.value || "-1", 10);
        el = element("fieldset", { className: "picker" }, [element("legend", { text: f.label || "" }),
          ...node.children.map((option, index) => element("label", {}, [
            element("input", { type: "radio", name, value: String(index), checked: index === selected, "data-focus-key": `${key}:${index}`,
              on: { change: () => input(screen, node, "select", index) } }),
            element("span", { text: option.fields.text || "" }),
          ]))]);
        break;
      }
      case "Spacer": el = element("div", { className: "spacer", "aria-hidden": "true" }); break;
      case "Divider": el = element("hr"); break;
      default: el = element("div", { className: "group" }, node.children.map((child) => buildNode(child, screen)));
    }
    el.dataset.view = node.id;
    views.set(`${screen}\u0000${node.id}`, el);
    return styled(el, node);
  }

  function currentNode(screen, id) {
    const found = state.screens.find((s) => s.id === screen);
    const search = (node) => {
      if (!node) return null;
      if (node.id === id) return node;
      for (const child of node.children) { const hit = search(child); if (hit) return hit; }
      return null;
    };
    return found ? search(found.tree) : null;
  }

  // A node changed on a screen that stayed: its element is rebuilt (its subtree with it),
  // except a text field being typed into, whose caret stays where the person left it.
  function replaceNode(screen, node) {
    const found = state.screens.find((s) => s.id === screen);
    if (!found) return;
    const swap = (tree) => {
      if (tree.id === node.id) return node;
      return { ...tree, children: tree.children.map(swap) };
    };
    found.tree = swap(found.tree);
    const old = views.get(`${screen}\u0000${node.id}`);
    if (!old) { renderScreens(); return; }
    if (node.type === "TextField" && old.contains(document.activeElement)) {
      old.querySelector(".label").textContent = node.fields.label || "";
      const field = document.activeElement;
      const text = node.fields.text || "";
      if (field.value !== text && hostChangedText(field.dataset.focusKey, text)) field.value = text;
      return;
    }
    const active = document.activeElement;
    const key = old.contains(active) ? focusKeyOf(active) : null;
    const typed = key ? typedInto(active) : null;
    for (const [name, el] of views) if (name.startsWith(`${screen}\u0000`) && old.contains(el)) views.delete(name);
    const fresh = buildNode(node, screen);
    old.replaceWith(fresh);
    if (key) {
      const again = fresh.querySelector(`[data-focus-key="${CSS.escape(key)}"]`) || (fresh.dataset.focusKey === key ? fresh : null);
      if (again) { again.focus(); keepTyped(again, typed); }
    }
  }

  // ---- Inspector ----

  function megabytes(bytes) { return `${(bytes / 1048576).toFixed(1)} MB`; }

  function renderPlugins() {
    $("plugins").tBodies[0].replaceChildren(...state.plugins.map((plugin) => {
      const runs = plugin.runs ? (plugin.pid ? `${plugin.runs} · pid ${plugin.pid}` : plugin.runs) : "—";
      const memory = plugin.memory !== undefined && plugin.memory !== null
        ? `${megabytes(plugin.memory)} / ${plugin.memoryLimit ? `${Math.round(plugin.memoryLimit / 1048576)} MB` : "no limit"}` : (plugin.runs === "in-process" ? "in the host" : "—");
      const cpu = plugin.cpuMilliseconds !== undefined && plugin.cpuMilliseconds !== null ? `${(plugin.cpuMilliseconds / 1000).toFixed(2)} s / no limit` : "—";
      const crashes = plugin.crashLimit ? `${plugin.crashes} / ${plugin.crashLimit} in ${plugin.crashWindowSeconds} s` : "—";
      return element("tr", { "data-plugin": plugin.id }, [
        element("th", { scope: "row" }, [element("span", { text: plugin.id }),
          element("span", { className: "detail", text: ` ${plugin.version} · ${plugin.state}${plugin.generation ? ` · g${plugin.generation}` : ""}` })]),
        element("td", { text: runs }), element("td", { text: memory }), element("td", { text: cpu }), element("td", { text: crashes }),
        element("td", {}, [element("button", { type: "button", text: "Reload", "aria-label": `Reload ${plugin.id}`, "data-focus-key": `reload:${plugin.id}`,
          on: { click: () => send({ op: "reload", plugin: plugin.id }) } })]),
      ]);
    }));
  }

  function renderReload() {
    const box = $("reload");
    const reload = state.reload;
    if (!reload) { box.textContent = "none yet"; return; }
    box.replaceChildren(element("p", { text: reload.message }),
      element("ol", { className: "phases" }, reload.phases.map((phase) => element("li", { text: `${phase.name} ${phase.milliseconds.toFixed(2)} ms` }))));
  }

  function renderBanner() {
    const banner = state.banner;
    $("banner").hidden = !banner;
    $("banner-text").textContent = banner ? banner.text : "";
  }

  function appendEvents(events) {
    const list = $("events");
    for (const event of events) list.append(element("li", { "data-kind": event.kind, text: `${event.sequence}. ${event.subject}: ${event.message}` }));
    while (list.children.length > 200) list.firstElementChild.remove();
    list.scrollTop = list.scrollHeight;
  }

  // ---- Keys and controls outside the screen ----

  function goBack() {
    if (state && state.back) send({ op: state.back });
  }

  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      if (state && state.banner) send({ op: "dismissBanner" }); else goBack();
      return;
    }
    // + and - step the focused stepper, as in the terminal.
    const stepper = event.target.closest && event.target.closest(".stepper");
    if (stepper && (event.key === "+" || event.key === "-")) {
      event.preventDefault();
      stepper.querySelector(event.key === "+" ? "[data-focus-key$=':up']" : "[data-focus-key$=':down']").click();
    }
  });

  document.addEventListener("DOMContentLoaded", () => {
    $("back").addEventListener("click", goBack);
    $("banner-close").addEventListener("click", () => send({ op: "dismissBanner" }));
    $("toggle-inspector").addEventListener("click", (event) => {
      const aside = $("inspector");
      aside.hidden = !aside.hidden;
      event.target.setAttribute("aria-expanded", String(!aside.hidden));
    });
    connect();
  });
})();
