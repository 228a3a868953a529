#!/usr/bin/env python3
"""Writes the one conformance vector too long to keep by hand: vectors/stack-bounded-50.json.

51 campaigns each answer one chapter of a `chapter_done` event. With the app in the background, every
trigger stacks its campaign (docs/delivery-semantics.md §2.5); the stack holds at most 50, so the 51st
pushes the bottom one (campaign 1) out and counts a `stack_full` discard, which it uploads as campaign 1's
count. Run from anywhere:

    python3 Tests/conformance/generate.py
"""
import json
import os

START = "2026-01-01T09:00:00Z"
CAMPAIGNS = 51
STACK_LIMIT = 50


def render(value, indent=0, used=0, width=120):
    """JSON with each value on one line when it fits in `width` columns, as the hand-kept vectors are written."""
    flat = json.dumps(value, ensure_ascii=False)
    if used + len(flat) <= width or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            head = f"{pad}{json.dumps(key)}: "
            lines.append(head + render(item, indent + 2, len(head) + 1, width))
        return "{\n" + ",\n".join(lines) + "\n" + " " * indent + "}"
    lines = [pad + render(item, indent + 2, len(pad) + 1, width) for item in value]
    return "[\n" + ",\n".join(lines) + "\n" + " " * indent + "]"


def campaign(chapter):
    return {"id": chapter, "priority": 5, "schedule": {"start": None, "end": None, "timeZone": "UTC"},
            "triggers": [{"event": "chapter_done", "filters": [{"property": "chapter", "op": "eq", "value": chapter}]}],
            "frequency": {"type": "always"}, "targeting": {},
            "message": {"layout": "banner", "title": {"text": f"Chapter {chapter} done!"}, "backgroundColor": "#1A73E8"},
            "data": [], "startedAt": "2025-12-01T09:00:00Z"}


def chapter_step(chapter):
    expect = {"outcomes": [{"event": "chapter_done", "outcome": "stacked", "campaign": chapter}]}
    if chapter >= STACK_LIMIT:
        # Top first: the newest chapters, as many as the stack holds.
        expect["stack"] = list(range(chapter, max(chapter - STACK_LIMIT, 0), -1))
        expect["discards"] = {"stack_full": chapter - STACK_LIMIT}
    return {"do": "trigger", "event": "chapter_done", "properties": {"chapter": chapter}, "expect": expect}


def vector():
    kept = list(range(CAMPAIGNS, CAMPAIGNS - STACK_LIMIT, -1))
    return {
        "name": "the stack holds at most 50 messages: the 51st drops the bottom one (stack_full)",
        "rules": ["stack", "discards", "background", "display-next"],
        "start": START,
        "device": {"platform": "ios", "appVersion": "2.4.0", "language": "en", "country": "US",
                   "userProperties": {"tier": "gold", "age": 30}, "orientation": "portrait",
                   "installationId": "0e9a4b6c-0000-4000-8000-000000000001"},
        "options": {"minimumIntervalSeconds": None, "sessionTimeoutSeconds": 10, "displayTimeoutSeconds": 10,
                    "rendererTimeoutSeconds": 10, "dataCollection": True},
        "feed": {"schemaVersion": 1, "app": {"id": 1, "name": "Shop", "minIntervalSeconds": 0},
                 "generatedAt": START, "pollAfterSeconds": 60,
                 "campaigns": [campaign(chapter) for chapter in range(1, CAMPAIGNS + 1)]},
        "steps": [{"do": "start"}, {"do": "background"}]
                 + [chapter_step(chapter) for chapter in range(1, CAMPAIGNS + 1)]
                 + [{"do": "foreground", "expect": {"outcomes": [{"event": "app_foreground", "outcome": "noMatch"}],
                                                    "stack": kept}},
                    {"do": "displayNext", "expect": {"shown": CAMPAIGNS, "slot": CAMPAIGNS, "stack": kept[1:]}}],
        "events": [],
        # The campaigns pushed out of the stack, counted for upload (the first ones, one each).
        "discardCounts": [{"campaignId": chapter, "reason": "stack_full", "day": START[:10], "count": 1, "installationId": True}
                          for chapter in range(1, CAMPAIGNS - STACK_LIMIT + 1)],
    }


if __name__ == "__main__":
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors", "stack-bounded-50.json")
    with open(path, "w", encoding="utf-8") as out:
        out.write(render(vector()) + "\n")
    print("wrote", path)
