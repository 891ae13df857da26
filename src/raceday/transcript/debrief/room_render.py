"""The room's after-action report (`room.RoomAar`) as Markdown and as one self-contained,
printable HTML page (inline CSS, no script, no reference to anything outside it), readable
on a projector and on a phone: tables become cards on a narrow screen."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from raceday.errors import TranscriptError
from raceday.inert import inert
from raceday.transcript.debrief.people import RATINGS
from raceday.transcript.debrief.room import (
    ROOM_HTML,
    ROOM_MD,
    RoomAar,
    RoomObjective,
    TeamHarm,
    TeamPart,
    build_room,
)
from raceday.transcript.timeline_chart import escape_text

STRIP = 48
NARROW_TEAMS = 4
"""Up to this many teams, the objectives stay a table on a phone (more: a card each)."""
HELD, SERVED = "█", "·"
_ACTIVE = {ord(c): "\\" + c for c in "\\`<[]|*_"}

INTRO = ("Each team played the same exercise on the same night, in its own world. Every "
         "line below is a team's own debrief (its transcript and what the room wrote into "
         "its AAR); each team's full AAR is in its session folder.")
PLAN_INTRO = ("Every team's corrective actions in one plan; a row two teams share is one "
              "row, naming both. Owners and dates are filled in per team with `raceday aar "
              "TEAM-SESSION --owner N NAME --due N YYYY-MM-DD`, then `raceday aar GROUP` "
              "again.")


def _t(text: object) -> str:
    """Data as Markdown that shows it and does nothing (one line, active marks escaped)."""
    return " ".join(str(text).split()).translate(_ACTIVE)


def _md_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(_t(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_t(c) for c in row) + " |" for row in rows]
    return lines


def _score(part: TeamPart) -> str:
    d = part.debrief
    if d is None:
        return "cannot be read"
    return f"{d.score.total}/{d.score.max}" if d.score else "not scored"


def _side_by_side(room: RoomAar, rows: Sequence[RoomObjective]) -> tuple[list[str],
                                                                          list[list[str]]]:
    header = [""] + [p.team for p in room.teams]
    extra = any(c[0] == "that night" for r in rows for c in r.cells)
    if extra:
        header.append("that night")
    body = []
    for row in rows:
        cells = dict(row.cells)
        body.append([row.name] + [cells.get(h, "—") for h in header[1:]])
    return header, body


def strip(room: RoomAar, harm: TeamHarm | None, part: TeamPart,
          width: int = STRIP) -> str:
    """One team's harm over the night in `width` cells: held in any minute of a cell, served
    in all of them, blank where its transcript had not reached."""
    end = max(room.end, 1)
    step = max(1, -(-end // width))
    cells = -(-end // step)
    out = []
    for c in range(cells):
        first, last = c * step, (c + 1) * step
        if first > part.end:
            out.append(" ")
        elif harm is not None and any(s.start < last and first < max(s.end, s.start + 1)
                                      for s in harm.spells):
            out.append(HELD)
        else:
            out.append(SERVED)
    return "".join(out)


def spell_words(room: RoomAar, harm: TeamHarm | None) -> str:
    if harm is None or not harm.spells:
        return "not seen"
    spells = ", ".join(f"{room.time(s.start)}-{room.time(s.end)}" + (" (still held)"
                                                                      if s.open else "")
                       for s in harm.spells)
    return f"{harm.minutes} min: {spells}"


def _harm_of(part: TeamPart, ident: str) -> TeamHarm | None:
    return next((h for h in part.harms if h.id == ident), None)


def _left(room: RoomAar, part: TeamPart) -> str:
    return (f" (left at {room.time(part.left)}; the automation played the rest)"
            if part.left is not None else "")


def room_markdown(room: RoomAar) -> str:
    """The room's report as Markdown (`aar.md` in the group's folder)."""
    clock = f"{room.time(0)} to {room.time(room.end)}" + (f" {room.zone}" if room.zone else "")
    out = [f"# After-action report for the room: {_t(room.title)}", "",
           f"*{len(room.teams)} teams played `{_t(room.exercise)}` on one night ({clock}).* "
           + INTRO, "", "## 1. The teams", ""]
    out += _md_table(("Team", "Score", "Participants", "Session"), [
        (p.team, _score(p), (p.players or "—") + _left(room, p), p.folder) for p in room.teams])
    out += ["", "## 2. Objectives, side by side", ""]
    if room.objectives:
        out += _md_table(*_side_by_side(room, room.objectives))
        out += ["", "Ratings (HSEEP): " + "; ".join(f"{k}: {v}" for k, v in RATINGS.items())
                + "."]
    else:
        out.append("(no team was scored)")
    if room.figures:
        out += ["", "### What the score measured", ""]
        out += _md_table(*_side_by_side(room, room.figures))
    out += ["", "## 3. Harms over time", "",
            f"What each team's customers saw, minute by minute ({HELD} held in those minutes, "
            f"{SERVED} served).", ""]
    if not room.harm_ids:
        out.append("No team's customers were harmed.")
    width = max((len(p.team) for p in room.teams), default=4)
    for ident, words in room.harm_ids:
        out += [f"### {_t(words)}", "", "```"]
        for p in room.teams:
            harm = _harm_of(p, ident)
            out.append(f"{p.team:<{width}}  {strip(room, harm, p)}  {spell_words(room, harm)}"
                       + _left(room, p))
        first, last = room.time(0), room.time(room.end)
        cells = len(strip(room, None, room.teams[0])) if room.teams else STRIP
        out += [" " * (width + 2) + first + " " * max(1, cells - len(first) - len(last)) + last,
                "```", ""]
    out += ["", "## 4. Strengths and areas for improvement, team by team", ""]
    for p in room.teams:
        out += [f"### Team {_t(p.team)} ({_score(p)})", ""]
        d = p.debrief
        if d is None:
            out += [f"Its transcript cannot be read: {_t(p.error)}", ""]
            continue
        a = d.after_action
        out += ["#### Strengths", ""]
        out += [f"- {_t(x)}" for x in a.strengths] or ["- (none recorded)"]
        out += ["", "#### Areas for improvement", ""]
        for n, x in enumerate(a.improvements, start=1):
            filled = a.analysis_of(n - 1)
            out.append(f"{n}. {_t(x)}")
            if filled.analysis:
                out.append(f"   **Analysis:** {_t(filled.analysis)}")
            if filled.recommendation:
                out.append(f"   **Recommendation:** {_t(filled.recommendation)}")
        if not a.improvements:
            out.append("- (none recorded)")
        out.append("")
    out += ["## 5. Improvement plan for the room", "", PLAN_INTRO, ""]
    if room.actions:
        out += _md_table(("#", "Corrective action", "Teams (and what each team's AAR says)"), [
            (n, a.action, "; ".join(f"{team} ({detail})" if detail else team
                                    for team, detail in a.teams))
            for n, a in enumerate(room.actions, start=1)])
    else:
        out.append("(no team has a corrective action yet)")
    out += ["", "---", "", "*Written by raceday from each team's transcript (events.jsonl) "
            "and AAR (aar.json).*", ""]
    return "\n".join(out)


_CSS = """
:root { --ink: #1b1f23; --dim: #5d6670; --rule: #d5d9de; --bad: #b03a2e; --good: #1e8449;
        --panel: #f5f7f9; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       max-width: 1040px; margin: 0 auto; padding: 24px; }
h1 { font-size: 1.7em; margin: 0 0 .3em; }
h2 { font-size: 1.3em; border-bottom: 2px solid var(--rule); padding-bottom: .2em;
     margin-top: 2em; }
h3 { font-size: 1.05em; margin: 1.4em 0 .4em; }
h4 { margin: .8em 0 .2em; }
.lede { color: var(--dim); }
table { border-collapse: collapse; width: 100%; margin: .4em 0 1em; font-size: .92em; }
th, td { border: 1px solid var(--rule); padding: .3em .5em; text-align: left;
         vertical-align: top; }
th { background: var(--panel); }
td.r-P { color: var(--good); font-weight: 600; } td.r-U { color: var(--bad); font-weight: 600; }
td.r-S, td.r-M { color: #b9770e; font-weight: 600; }
td.num, th.num { text-align: center; white-space: nowrap; }
.note { color: var(--dim); font-size: .88em; }
.harm { margin: .6em 0 1.4em; }
.row { display: grid; grid-template-columns: 8em 1fr 17em; gap: .2em .8em; align-items: center;
       margin: .25em 0; }
.team { font-weight: 600; overflow-wrap: anywhere; }
.bar { position: relative; height: 1.1em; background: #e9f3ec; border: 1px solid var(--rule); }
.bar .held { position: absolute; top: 0; bottom: 0; background: var(--bad); min-width: 2px; }
.bar .ahead { position: absolute; top: 0; bottom: 0; right: 0; background: #fff; }
.bar .left { position: absolute; top: -3px; bottom: -3px; width: 0;
             border-left: 2px dashed var(--ink); }
.words { font-size: .88em; color: var(--dim); }
.axis { display: flex; justify-content: space-between; font-size: .8em; color: var(--dim); }
.axis-row { display: grid; grid-template-columns: 8em 1fr 17em; gap: .8em; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 1em; }
.card { border: 1px solid var(--rule); padding: .4em 1em .8em; background: #fff; }
.card h3 { margin-top: .4em; }
.card ul, .card ol { padding-left: 1.3em; margin: .2em 0; }
.legend { font-size: .85em; color: var(--dim); }
.legend i { display: inline-block; width: 1em; height: .8em; vertical-align: middle;
            margin: 0 .3em 0 .8em; border: 1px solid var(--rule); }
footer { color: var(--dim); font-size: .85em; margin-top: 3em; border-top: 1px solid var(--rule);
         padding-top: .6em; }
@media (max-width: 640px) {
  body { padding: 12px; overflow-wrap: anywhere; }
  .row, .axis-row { grid-template-columns: 1fr; }
  .axis-row > span:first-child, .axis-row > span:last-child { display: none; }
  .cards { grid-template-columns: 1fr; }
  table.cardify, table.cardify thead, table.cardify tbody, table.cardify tr,
  table.cardify th, table.cardify td { display: block; width: 100%; }
  table.cardify thead { position: absolute; left: -9999px; }
  table.cardify tr { border: 1px solid var(--rule); margin-bottom: .6em; }
  table.cardify td { border: none; border-bottom: 1px solid var(--rule); }
  table.cardify td:last-child { border-bottom: none; }
  table.cardify td[data-label]::before { content: attr(data-label); display: block;
      font-weight: 600; color: var(--dim); font-size: .85em; }
  table.cardify td.rowhead { background: var(--panel); font-weight: 700; }
}
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  h2 { break-after: avoid; } table, .harm, .card { break-inside: avoid; }
  .bar .held, .bar { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""


def _e(text: object) -> str:
    return escape_text(str(text))


def _html_table(header: Sequence[str], rows: Iterable[Sequence[object]], *,
                rated: bool = False, cards: bool = True) -> str:
    """A table that becomes one card per row on a narrow screen (its first cell the card's
    heading, the others labelled with their column)."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for i, c in enumerate(row):
            text = str(c)
            cls = "rowhead" if i == 0 else ""
            grade = text.split(" (")[0]  # "30/30 S (expected actions: …)"
            if rated and i and grade[-1:] in RATINGS and grade[-2:-1] == " ":
                cls = f"r-{grade[-1]}"
            label = f' data-label="{_e(header[i])}"' if i and i < len(header) else ""
            cells.append(f'<td class="{cls}"{label}>{_e(text)}</td>' if cls
                         else f"<td{label}>{_e(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    kind = ' class="cardify"' if cards else ""
    return (f"<table{kind}><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


def _bar(room: RoomAar, harm: TeamHarm | None, part: TeamPart) -> str:
    end = max(room.end, 1)

    def pct(minute: int) -> str:
        return f"{100 * max(0, min(minute, end)) / end:.2f}%"

    spans = []
    for s in harm.spells if harm else ():
        width = 100 * max(s.end - s.start, 1) / end
        spans.append(f'<span class="held" style="left:{pct(s.start)};width:{width:.2f}%" '
                     f'title="{_e(room.time(s.start))}-{_e(room.time(s.end))}"></span>')
    if part.end < end:
        spans.append(f'<span class="ahead" style="width:{100 - 100 * part.end / end:.2f}%">'
                     "</span>")
    if part.left is not None:
        spans.append(f'<span class="left" style="left:{pct(part.left)}" '
                     f'title="left at {_e(room.time(part.left))}"></span>')
    return f'<div class="bar" role="img" aria-label="{_e(spell_words(room, harm))}">' \
           + "".join(spans) + "</div>"


def room_html(room: RoomAar) -> str:
    """The room's report as one HTML page (`aar.html` in the group's folder)."""
    clock = f"{room.time(0)} to {room.time(room.end)}" + (f" {room.zone}" if room.zone else "")
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>After-action report for the room: {_e(room.title)}</title>",
           f"<style>{_CSS}</style></head><body>",
           f"<h1>After-action report for the room: {_e(room.title)}</h1>",
           f'<p class="lede">{len(room.teams)} teams played <code>{_e(room.exercise)}</code> '
           f"on one night ({_e(clock)}). {_e(INTRO)}</p>",
           "<h2>1. The teams</h2>",
           _html_table(("Team", "Score", "Participants", "Session"), [
               (p.team, _score(p), (p.players or "—") + _left(room, p), p.folder)
               for p in room.teams]),
           "<h2>2. Objectives, side by side</h2>"]
    if room.objectives:
        # a few teams' ratings fit a phone's width as they are: a table reads across
        out.append(_html_table(*_side_by_side(room, room.objectives), rated=True,
                               cards=len(room.teams) > NARROW_TEAMS))
        out.append('<p class="note">Ratings (HSEEP): ' + "; ".join(
            f"<strong>{k}</strong> {_e(v)}" for k, v in RATINGS.items()) + ".</p>")
    else:
        out.append("<p>No team was scored.</p>")
    if room.figures:
        out += ["<h3>What the score measured</h3>",
                _html_table(*_side_by_side(room, room.figures))]
    out += ["<h2>3. Harms over time</h2>",
            '<p class="legend">What each team\'s customers saw, minute by minute:'
            '<i style="background:#b03a2e"></i>harm held<i style="background:#e9f3ec"></i>'
            'served<i style="background:#fff"></i>not played<i style="border:0;'
            'border-left:2px dashed #1b1f23;width:0"></i>the team left</p>']
    if not room.harm_ids:
        out.append("<p>No team's customers were harmed.</p>")
    for ident, words in room.harm_ids:
        out.append(f'<div class="harm"><h3>{_e(words)}</h3>')
        for p in room.teams:
            harm = _harm_of(p, ident)
            out.append(f'<div class="row"><span class="team">{_e(p.team)}</span>'
                       f"{_bar(room, harm, p)}<span class=\"words\">"
                       f"{_e(spell_words(room, harm) + _left(room, p))}</span></div>")
        out.append(f'<div class="axis-row"><span></span><div class="axis"><span>'
                   f"{_e(room.time(0))}</span><span>{_e(room.time(room.end // 2))}</span>"
                   f"<span>{_e(room.time(room.end))}</span></div><span></span></div></div>")
    out += ["<h2>4. Strengths and areas for improvement, team by team</h2>",
            '<div class="cards">']
    for p in room.teams:
        out.append(f'<section class="card"><h3>Team {_e(p.team)} ({_e(_score(p))})</h3>')
        d = p.debrief
        if d is None:
            out.append(f"<p>Its transcript cannot be read: {_e(p.error)}</p></section>")
            continue
        a = d.after_action
        out.append("<h4>Strengths</h4>" + (
            "<ul>" + "".join(f"<li>{_e(x)}</li>" for x in a.strengths) + "</ul>"
            if a.strengths else "<p>(none recorded)</p>"))
        items = []
        for n, x in enumerate(a.improvements):
            filled = a.analysis_of(n)
            items.append(f"<li>{_e(x)}"
                         + (f"<br><strong>Analysis:</strong> {_e(filled.analysis)}"
                            if filled.analysis else "")
                         + (f"<br><strong>Recommendation:</strong> "
                            f"{_e(filled.recommendation)}" if filled.recommendation else "")
                         + "</li>")
        out.append("<h4>Areas for improvement</h4>" + (
            "<ol>" + "".join(items) + "</ol>" if items else "<p>(none recorded)</p>")
            + "</section>")
    out += ["</div>", "<h2>5. Improvement plan for the room</h2>", f"<p>{_e(PLAN_INTRO)}</p>"]
    if room.actions:
        out.append(_html_table(("#", "Corrective action", "Teams (and what each team's AAR "
                                                          "says)"), [
            (n, a.action, "; ".join(f"{team} ({detail})" if detail else team
                                    for team, detail in a.teams))
            for n, a in enumerate(room.actions, start=1)]))
    else:
        out.append("<p>(no team has a corrective action yet)</p>")
    out += ["<footer>Written by raceday from each team's transcript (events.jsonl) and AAR "
            "(aar.json).</footer>", "</body></html>", ""]
    return "\n".join(out)


def room_command(title: str, exercise: str, folder: Path,
                 teams: Sequence[tuple[str, Path]], out: list[str]) -> int:
    """`raceday aar GROUP`: write the room's report (aar.md, aar.html) into the group's
    folder and say what it holds."""
    # the group names its exercise as the host was given it (a folder's path when played
    # from one): the room reads its id, the folder's name
    room = build_room(title, Path(exercise).name, folder, teams)
    md, html = folder / ROOM_MD, folder / ROOM_HTML
    try:
        md.write_text(inert(room_markdown(room)), encoding="utf-8")
        html.write_text(inert(room_html(room)), encoding="utf-8")
    except OSError as exc:
        raise TranscriptError([f"{folder}: cannot write the room's AAR: {exc.strerror}"]
                              ) from None
    out.append(f"The room's after-action report for {len(room.teams)} teams: {md} and {html}")
    for part in room.teams:
        d = part.debrief
        if d is None:
            out.append(f"  {part.team}: cannot be read ({part.error})")
            continue
        score = f"{d.score.total}/{d.score.max}" if d.score else "not scored"
        a = d.after_action
        out.append(f"  {part.team}: {score}; {len(a.strengths)} strengths, "
                   f"{len(a.improvements)} areas for improvement, "
                   f"{len(a.actions)} corrective actions ({part.folder})")
    out.append(f"  improvement plan for the room: {len(room.actions)} rows "
               "(each team's rows: `raceday aar TEAM-SESSION --owner N NAME ...`)")
    return 0
