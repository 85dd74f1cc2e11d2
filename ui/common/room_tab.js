// The tab's learner id (ui/common/room_tab.py): read from sessionStorage, or made (96
// random bits, 16 URL-safe characters, as rooms.new_learner_id) and kept there; sent to
// the server unless it holds it already. sessionStorage belongs to one tab: a reload keeps
// it, another tab has its own.
export default function ({ data, setStateValue }) {
  const NAME = data.name;
  let id = null;
  try { id = window.sessionStorage.getItem(NAME); } catch (e) { id = null; }
  if (!/^[A-Za-z0-9_-]{16,43}$/.test(id || "")) {
    const bytes = crypto.getRandomValues(new Uint8Array(12));
    id = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_");
    try { window.sessionStorage.setItem(NAME, id); } catch (e) { /* private mode */ }
  }
  if (data.known !== id) setStateValue("id", id);
}
