// Entry point of the webview: mounts the app into #app.
import { mount } from "svelte";
import App from "./App.svelte";
import "./app.css";

const target = document.getElementById("app");
if (!target) {
  throw new Error("cannot start the UI: index.html has no #app element");
}

export default mount(App, { target });
