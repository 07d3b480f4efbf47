// The reader's one script. Loaded in <head> without `defer` so that a stored theme applies
// before the first paint (no flash), it waits for the document for the rest: the theme toggle,
// copy buttons, sidebar levels loaded on demand, and search as you type. Everything else works
// without it. No inline script, so a strict Content-Security-Policy can forbid them.
(function () {
  "use strict";
  var root = document.documentElement;
  var KEY = "quire-theme";

  function stored() {
    try {
      return localStorage.getItem(KEY);
    } catch (e) {
      return null;
    }
  }

  if (!root.hasAttribute("data-theme-fixed")) {
    var saved = stored();
    if (saved === "light" || saved === "dark") root.setAttribute("data-theme", saved);
  }

  function theme() {
    var set = root.getAttribute("data-theme");
    if (set) return set;
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }

  function ready(run) {
    if (document.readyState !== "loading") run();
    else document.addEventListener("DOMContentLoaded", run);
  }

  function setupThemeToggle() {
    var toggle = document.querySelector(".theme-toggle");
    if (!toggle) return;
    var sync = function () {
      toggle.setAttribute("aria-pressed", theme() === "dark" ? "true" : "false");
    };
    toggle.hidden = false;
    sync();
    toggle.addEventListener("click", function () {
      var next = theme() === "dark" ? "light" : "dark";
      root.setAttribute("data-theme", next);
      try {
        localStorage.setItem(KEY, next);
      } catch (e) {
        /* private mode: the choice lasts for this page only */
      }
      sync();
    });
  }

  function setupCopyButtons() {
    if (!navigator.clipboard) return;
    document.querySelectorAll("button.copy").forEach(function (button) {
      button.hidden = false;
      button.addEventListener("click", function () {
        var code = button.parentNode.querySelector("pre code");
        if (!code) return;
        navigator.clipboard.writeText(code.innerText).then(function () {
          button.textContent = "Copied";
          setTimeout(function () {
            button.textContent = "Copy";
          }, 1500);
        });
      });
    });
  }

  function setupSidebar() {
    var nav = document.getElementById("q-sidebar");
    if (!nav) return;
    var navUrl = nav.getAttribute("data-nav-url");

    // Entries with sub-pages carry their id; each gets a button that shows or hides its level,
    // loading a collapsed one from the server the first time.
    function setupToggle(item) {
      var link = item.firstElementChild;
      var loaded = item.querySelector(":scope > ul");
      if (!link || (!loaded && !navUrl)) return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "toggle";
      button.setAttribute("aria-expanded", loaded ? "true" : "false");
      button.setAttribute("aria-label", link.textContent.trim() + ": sub-pages");
      link.insertAdjacentElement("afterend", button);
      button.addEventListener("click", function () {
        var list = item.querySelector(":scope > ul");
        var open = button.getAttribute("aria-expanded") === "true";
        if (list) {
          list.hidden = open;
          button.setAttribute("aria-expanded", open ? "false" : "true");
          return;
        }
        if (button.getAttribute("aria-busy")) return;
        button.setAttribute("aria-busy", "true");
        fetch(navUrl + encodeURIComponent(item.getAttribute("data-id")), { headers: { Accept: "text/html" } })
          .then(function (response) {
            if (!response.ok) throw new Error("HTTP " + response.status);
            return response.text();
          })
          .then(function (html) {
            // The fragment is the server's own escaped HTML.
            var template = document.createElement("template");
            template.innerHTML = html;
            var level = template.content.querySelector("ul");
            if (!level) return;
            level.classList.remove("tree");
            item.appendChild(level);
            level.querySelectorAll(":scope > li[data-id]").forEach(setupToggle);
            button.setAttribute("aria-expanded", "true");
          })
          .catch(function () {
            if (link.href) window.location.href = link.href;
          })
          .then(function () {
            button.removeAttribute("aria-busy");
          });
      });
    }

    nav.querySelectorAll("li[data-id]").forEach(setupToggle);
    var current = nav.querySelector('[aria-current="page"]');
    if (current && nav.scrollHeight > nav.clientHeight) {
      nav.scrollTop = current.offsetTop - nav.clientHeight / 2;
    }
  }

  function setupSearch() {
    var input = document.getElementById("q-search");
    if (!input) return;
    var box = document.getElementById("q-search-results");
    var url = input.getAttribute("data-search-url");
    var timer = null;
    var controller = null;

    function close() {
      box.hidden = true;
    }

    function entry(href, title, kind, body) {
      var link = document.createElement("a");
      link.href = href;
      link.className = kind;
      var strong = document.createElement("span");
      strong.className = "result-title";
      strong.textContent = title;
      link.appendChild(strong);
      if (body) {
        var text = document.createElement("span");
        text.className = "result-body";
        text.textContent = body;
        link.appendChild(text);
      }
      return link;
    }

    function show(query, items) {
      box.textContent = "";
      if (!items.length) {
        var empty = document.createElement("p");
        empty.className = "empty";
        empty.textContent = "No results for \u201c" + query + "\u201d";
        box.appendChild(empty);
      }
      items.forEach(function (hit) {
        box.appendChild(entry(hit.url, hit.title, "page"));
        (hit.sections || []).forEach(function (section) {
          if (section.title || section.body) {
            box.appendChild(entry(section.url, section.title || hit.title, "section", section.body));
          }
        });
      });
      box.hidden = false;
    }

    function search(query) {
      if (controller && controller.abort) controller.abort();
      controller = window.AbortController ? new AbortController() : null;
      var target = url + (url.indexOf("?") < 0 ? "?" : "&") + "q=" + encodeURIComponent(query);
      fetch(target, { headers: { Accept: "application/json" }, signal: controller && controller.signal })
        .then(function (response) {
          if (!response.ok) throw new Error("HTTP " + response.status);
          return response.json();
        })
        .then(function (results) {
          if (input.value.trim() === query) show(query, results.items || []);
        })
        .catch(function () {
          /* aborted by a newer query, or offline: keep what is shown */
        });
    }

    input.addEventListener("input", function () {
      clearTimeout(timer);
      var query = input.value.trim();
      if (query.length < 2) {
        box.textContent = "";
        close();
        return;
      }
      timer = setTimeout(function () {
        search(query);
      }, 150);
    });

    function move(step) {
      var links = Array.prototype.slice.call(box.querySelectorAll("a"));
      if (!links.length) return;
      var at = links.indexOf(document.activeElement);
      var next = at + step;
      if (next < 0) input.focus();
      else links[Math.min(next, links.length - 1)].focus();
    }

    input.form.addEventListener("keydown", function (event) {
      if (event.key === "ArrowDown") {
        event.preventDefault();
        move(1);
      } else if (event.key === "ArrowUp") {
        event.preventDefault();
        move(-1);
      } else if (event.key === "Escape") {
        close();
        input.focus();
      }
    });

    document.addEventListener("click", function (event) {
      if (!input.form.contains(event.target)) close();
    });

    document.addEventListener("keydown", function (event) {
      var tag = document.activeElement && document.activeElement.tagName;
      var typing = tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT";
      if ((event.key === "/" && !typing) || (event.key === "k" && (event.metaKey || event.ctrlKey))) {
        event.preventDefault();
        input.focus();
      }
    });
  }

  function setupMenus() {
    // Open menus (<details>) close on a click elsewhere and on Escape.
    document.addEventListener("click", function (event) {
      document.querySelectorAll("details.menu[open]").forEach(function (menu) {
        if (!menu.contains(event.target)) menu.open = false;
      });
    });
    document.addEventListener("keydown", function (event) {
      if (event.key !== "Escape") return;
      document.querySelectorAll("details.menu[open]").forEach(function (menu) {
        menu.open = false;
        menu.querySelector("summary").focus();
      });
    });
  }

  function setupExpandables() {
    // A link to an expandable block (or to something inside one) opens it.
    function openTarget() {
      var id = location.hash.slice(1);
      try {
        id = decodeURIComponent(id);
      } catch (malformed) {
        // A fragment that is not valid percent-encoding names no element: leave it as written.
      }
      var target = id && document.getElementById(id);
      var opened = false;
      for (var node = target; node; node = node.parentElement) {
        if (node.tagName === "DETAILS" && node.classList.contains("expandable") && !node.open) {
          node.open = true;
          opened = true;
        }
      }
      if (opened) target.scrollIntoView();
    }
    window.addEventListener("hashchange", openTarget);
    openTarget();
  }

  ready(function () {
    setupThemeToggle();
    setupCopyButtons();
    setupSidebar();
    setupSearch();
    setupMenus();
    setupExpandables();
  });
})();
