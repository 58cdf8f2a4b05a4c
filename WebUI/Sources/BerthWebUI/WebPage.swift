/// The page: a fixed HTML shell (no plugin text in it: the script builds every view with
/// `textContent`), its script and its styles, all served from the binary.
enum WebPage {
    /// The shell; `token` is hex, so it is safe in an attribute.
    static func html(token: String) -> String {
        precondition(token.allSatisfy(\.isHexDigit), "the token is hex")
        return """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>Berth</title>
        <link rel="stylesheet" href="/page.css?token=\(token)">
        <script src="/page.js?token=\(token)" defer></script>
        </head>
        <body>
        <div id="app">
          <header class="bar">
            <button type="button" id="back" hidden>Back</button>
            <nav aria-label="Navigation path"><ol id="path"></ol></nav>
            <span id="connection" role="status" aria-live="polite">connecting…</span>
            <button type="button" id="toggle-inspector" aria-controls="inspector" aria-expanded="true">Inspector</button>
          </header>
          <div id="banner" role="alert" hidden><span id="banner-text"></span> <button type="button" id="banner-close">Dismiss</button></div>
          <div id="message" role="status" aria-live="polite" hidden></div>
          <div class="body">
            <main id="main" aria-label="Screen"></main>
            <aside id="inspector" aria-label="Inspector">
              <h2>Plugins</h2>
              <table id="plugins"><thead><tr><th scope="col">Plugin</th><th scope="col">Runs</th><th scope="col">Memory</th><th scope="col">CPU</th><th scope="col">Crashes</th><th scope="col"><span class="visually-hidden">Reload</span></th></tr></thead><tbody></tbody></table>
              <h2>Last reload</h2>
              <div id="reload">none yet</div>
              <h2>Events</h2>
              <ol id="events" aria-label="Event log"></ol>
            </aside>
          </div>
        </div>
        </body>
        </html>

        """
    }

    static let script = PackageResources.page_js
    static let styles = PackageResources.page_css
}
