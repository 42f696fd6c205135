/** Entry of the console bundle: language and theme first, then the app. */
import { render } from "preact";
import "uplot/dist/uPlot.min.css";
import "./style.css";
import { App } from "./app";
import { initialLang, setLang } from "./i18n";
import { initialTheme, setTheme } from "./theme";

setLang(initialLang(), false);
setTheme(initialTheme(), false);
render(<App />, document.getElementById("app")!);
