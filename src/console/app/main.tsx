/** Entry of the console bundle: language and theme, the session back from its cookie, then the app. */
import { render } from "preact";
import "uplot/dist/uPlot.min.css";
import "./style.css";
import { App } from "./app";
import { initialLang, setLang } from "./i18n";
import { initialTheme, setTheme } from "./theme";
import { session } from "./session";

setLang(initialLang(), false);
setTheme(initialTheme(), false);
// A reload or a new tab: the session cookie gives the signed-in state back. Started before the
// first render, so a private page waits for it instead of flashing the sign-in form.
void session.restore();
render(<App />, document.getElementById("app")!);
