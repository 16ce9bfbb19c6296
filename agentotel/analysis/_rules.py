"""The rules an agent's instructions write about its actions, read once per instructions text.

tau-bench's policies, an ops runbook, a refund desk's prompt: "at most 12 replicas", "a basic_economy reservation
cannot be changed", "only gold members may get a certificate", "never reset MFA without a security ticket", "refund
at most what the customer paid", "pay an invoice only when match_po answers 'matched'", "refunds only within 30 days
of delivery", "one exchange per order", "error rate under 2%". `read(text)` finds every such sentence once (a run's
model calls share a few instructions texts) and gives each rule's parts; detectors.py judges a call against them on
the facts the run read. The patterns open on their fixed words ("at most", "cannot be", "only", "without"): one that
opened on free words would be tried at every character of a long prompt.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from agentotel.analysis._ground import SHARE_WORDS, _number

__all__ = ["Rules", "Row", "Stop", "tables", "MONEY_FIGURE", "MINUTES", "read", "window", "count", "TODAY", "PERIOD_DAYS", "NOTE_CLAUSE", "FILLER", "TOOL_NAME", "sentence_at"]

# Where a clause of an instructions text (or a note) ends: a sentence's stop, a semicolon, a dash between words.
NOTE_CLAUSE = re.compile(r"[;.!?\n]+|\s[-\u2013\u2014]\s")
# Words of a tool's or a measure's name that say nothing of what it is about.
FILLER = frozenset({"the", "a", "an", "to", "for", "of", "by", "and", "or", "new", "my", "id", "ids", "tool", "api", "v1", "v2"})
TODAY = re.compile(r"\b(?:today\s+is|today's\s+date\s+is|current\s+date(?:\s+is)?:?|the\s+date\s+is)\s+(?:\w+day,?\s+)?"
                   r"(\d{4}-\d{2}-\d{2})", re.I)
PERIOD_DAYS = {"hour": 1 / 24, "day": 1, "business day": 1, "week": 7, "month": 30, "year": 365}

# "at most 12 replicas without approval", "no more than 500 USD", "a maximum of 3 seats"
_LIMIT = re.compile(r"\b(?:at\s+most|no\s+more\s+than|not\s+more\s+than|a\s+maximum\s+of|never\s+more\s+than|up\s+to)\s+"
                    r"[$€£]?(\d[\d,]*(?:\.\d+)?)\s*([a-z]{3,})", re.I)
# a sum of money: "up to EUR 10,000.00", "no more than $500"
_MONEY_LIMIT = re.compile(r"\b(?:at\s+most|no\s+more\s+than|not\s+more\s+than|a\s+maximum\s+of|never\s+more\s+than|up\s+to|"
                          r"limit\s+of)\s+([$€£]|[A-Z]{3}\b)\s?(\d[\d,]*(?:\.\d+)?)")
# An acceptance criterion: "error rate under 2%", "p99 below 800 ms", "uptime above 99.9%" (found by its comparator,
# the measure's words before it)
_COMPARED = re.compile(r"\b(under|below|less\s+than|above|over|more\s+than|at\s+least|at\s+most)\s+(\d+(?:\.\d+)?)\s*"
                       r"(?:%|percent|ms\b|s\b)?", re.I)
_VERDICT = re.compile(r"\b(?:checks?|verif\w*|confirm\w*|pass\w*|healthy|resolved|accept\w*|approv\w*)\b", re.I)
_MEASURE_FILLER = frozenset({"the", "its", "with", "are", "was", "has", "have", "is", "stays", "remains", "shows"})
# "a basic_economy reservation cannot be changed", "refunded orders may not be cancelled": an action barred for the
# records of one class (the class a value of theirs).
_BARRED_CLASS = re.compile(r"\b(?:an?\s+|any\s+)?([a-z][\w-]*)\s+([a-z]+?)s?\s+(?:cannot|can't|can\s+not|may\s+not|must\s+not|"
                           r"must\s+never|are\s+not\s+to|is\s+not\s+to)\s+be\s+([a-z]+)", re.I)
# "An account locked for fraud (account_status 'locked_fraud') must never be unlocked": the class by its value, quoted.
_BARRED_VALUE = re.compile(r"['\"`]([\w-]+)['\"`]\)?[^.\n]{0,40}?\b(?:cannot|can't|may\s+not|must\s+not|must\s+never|is\s+never\s+to|"
                           r"are\s+never\s+to)\s+be\s+([a-z]+)", re.I)
# "Never refund a ticket bought on the resale marketplace (channel "resale")": the class by its field's value, in
# brackets after the thing an action is barred on.
_BARRED_BRACKET = re.compile(r"\b(?:never|do\s+not|don'?t|must\s+not|may\s+not)\s+(?P<verb>[a-z]{3,})\s+(?:a|an|any|the)\s+[^.;\n()]{0,80}?"
                             r"\(\s*`?[a-z][a-z0-9_]*`?\s*(?:[:=]\s*|\s+(?:is\s+)?)['\"\u201c`](?P<value>[\w-]+)['\"\u201d`]\s*\)", re.I)
# "only gold members ... may get a travel certificate", "only premium customers are eligible": an action kept for one
# class of people.
_ONLY_CLASS = re.compile(r"\bonly\s+([a-z][\w-]*)\s+(members?|customers?|users?|accounts?|subscribers?|clients?|passengers?|"
                         r"guests?|tiers?|plans?)\b", re.I)
# "Never reset MFA without a security ticket", "do not refund without the manager's approval".
_WITHOUT = re.compile(r"\b(?:never|do\s+not|don'?t|must\s+not|may\s+not)\s+([a-z]+)\b[^.\n]{0,40}?\bwithout\s+(?:first\s+\w+ing\s+)?"
                      r"(?:an?\s+|the\s+|their\s+|its\s+)?((?:[\w'-]+\s+){0,2}[a-z]+)(?=\s*(?:[.,;:()\n]|$|\s(?:and|or|unless|from|"
                      r"first|in|on|for|by|with)\b))", re.I)
# "Refund at most what the customer paid", "never credit more than the order's total".
_AT_MOST_RECORD = re.compile(r"\b([a-z]{4,}\b[^.\n]{0,30}?)\b(?:at\s+most|no\s+more\s+than|not\s+more\s+than|never\s+more\s+than|"
                             r"up\s+to|(?:may|must|can|should)\s+(?:never|not)\s+exceed|cannot\s+exceed|can't\s+exceed|never\s+exceeds?)"
                             r"\s+(?:what|the|its|their)\b([^.\n]{0,60})", re.I)
_RECORD_AMOUNTS = ("paid", "total", "amount", "price", "balance", "charged", "value", "remaining", "available")
# "Pay the damage estimate less the policy's deductible", "refund the price minus the restocking fee": an amount
# the rule nets of another.
_NET_OF = re.compile(r"\b([a-z][a-z_ ()'-]{3,60}?)\s+(?:less|minus|net\s+of|after\s+(?:subtracting|deducting))\s+(?:the\s+|any\s+|its\s+)?"
                     r"(?:[a-z]+'s\s+)?([a-z][a-z_]{3,})", re.I)
# "A claim whose estimate is over $10,000 must not be approved before an adjuster has inspected it (the claim's
# adjuster_visit 'done')": an action barred until a field of its record has a value, maybe only for records past a
# figure.
_FIELD_GATE = re.compile(r"(?P<cond>[^.\n]{0,80}?)\b(?:must\s+not|may\s+not|cannot|can't|is\s+not\s+to|are\s+not\s+to|must\s+never)\s+be\s+"
                         r"(?P<verb>[a-z]+)\s+(?:before|until|unless)\b[^.\n(]{0,80}\((?:the\s+)?(?:[a-z]+'s\s+)?(?P<field>[a-z][a-z0-9_]+)"
                         r"\s+(?:is\s+|=\s*|:\s*)?['\"`](?P<value>[\w -]{1,30})['\"`]\)", re.I)
_WHOSE = re.compile(r"\bwhose\s+(?P<measure>[a-z_ ]{3,30}?)\s+(?:is\s+)?(?P<op>over|above|more\s+than|greater\s+than|under|below|less\s+than)"
                    r"\s+[$€£]?(?P<bound>\d[\d,]*(?:\.\d+)?)", re.I)
# "Flood damage is not covered unless the policy has the flood rider": a loss of a kind paid only with a cover.
_NOT_COVERED = re.compile(r"\b(?P<what>[a-z][a-z-]{2,30})\s+(?:damage|losses?|claims?|costs?|repairs?|items?)?\s*(?:is|are)\s+(?:not|never)\s+"
                          r"(?:covered|paid|reimbursed|refunded|eligible)\s+(?:unless|except\s+(?:if|when|where))\s+(?:the\s+)?[a-z']*\s*"
                          r"(?:has|have|includes?|holds?|carries|lists?)\s+(?:the\s+|an?\s+)?(?P<needs>[a-z][a-z -]{2,30}?)(?=\s*[.,:;)]|\s*$)", re.I)
# "A claim filed more than 30 days after the loss is denied, unless the claim's notes record a hospital stay": a
# record whose two dates lie too far apart is refused, but for an exception a field of it may record.
_LATE = re.compile(r"\b(?:an?\s+|any\s+)?[a-z]+\s+(?P<done>[a-z]+ed)\s+more\s+than\s+(?P<n>\d+)\s+(?P<unit>hour|day|week|month|year)s?\s+"
                   r"after\s+(?:the\s+|its\s+)?(?P<event>[a-z]+)\s+(?:is|are|will\s+be|must\s+be)\s+(?:denied|refused|rejected|declined|not\s+"
                   r"(?:paid|accepted|covered))(?:,?\s+unless\s+(?:the\s+)?(?:[a-z]+'s\s+)?(?P<field>[a-z_]+)\s+(?:records?|mentions?|shows?|"
                   r"says?|notes?|lists?)\s+(?:an?\s+|the\s+)?(?P<what>[a-z]+))?", re.I)
# "A transfer over $5,000 needs a second approval", "refunds above 500 EUR require a manager's sign-off": a thing an
# action past a figure must carry.
_NEEDS_OVER = re.compile(r"\b(?:an?\s+|any\s+)?(?P<deed>[a-z]+?)s?\s+(?:over|above|of\s+more\s+than|greater\s+than)\s+[$€£]?(?P<bound>\d[\d,]*(?:\.\d+)?)"
                         r"\s*(?:[A-Z]{3}\s+)?(?:needs?|requires?|must\s+have)\s+(?:an?\s+|the\s+)?(?:[a-z]+'s\s+)?(?:second|prior|written|"
                         r"separate|extra|additional|second-level)?\s*(?P<thing>[a-z]{3,}(?:-[a-z]+)?(?:\s+[a-z]{3,}(?:-[a-z]+)?)?)(?=\s*[.,:;(]|\s*$|\s+(?:from|by|of|before|first)\b)", re.I)
# "An account flagged for sanctions must be frozen ...; never transfer from it": an action barred on a record a flag
# of it names.
_FLAGGED = re.compile(r"\b(?:an?\s+|any\s+)?[a-z]+\s+(?:flagged|marked|tagged|listed)\s+(?:for|as|with)\s+['\"`]?(?P<flag>[\w-]{3,30})['\"`]?"
                      r"[^.\n]{0,80}?\b(?:never|do\s+not|don'?t|must\s+not|may\s+not|cannot)\s+(?P<verb>[a-z]+)", re.I)
# "A transaction already disputed or refunded is not disputed again": an action barred on a record in one of the
# states named.
_NOT_AGAIN = re.compile(r"\b(?:an?\s+|any\s+)?[a-z]+\s+(?:that\s+is\s+|that\s+was\s+)?already\s+(?P<states>[a-z]+(?:\s*(?:,|or|and)\s*[a-z]+)*)"
                        r"\s+(?:is|are|may|must|can|should)\s+(?:not|never)\s+(?:be\s+)?(?P<verb>[a-z]+)\s+again\b", re.I)
# "Book only a slot that list_slots shows as free", "only cancel appointments that are 'scheduled'", "refund only
# delivered orders": an action kept for records in one state (the verb before "only" or after it).
_ONLY_THAT = re.compile(r"\bonly\s+(?:(?P<verb>[a-z]{3,})\s+)?(?:an?\s+|the\s+|those\s+)?(?P<noun>[a-z]{3,}?)s?\s+(?:that|which)\s+"
                        r"(?:`?[a-z][\w.]*`?\s+)?(?:shows?|lists?|marks?|reports?|returns?|gives?|is|are|has\s+been|have\s+been)\s+"
                        r"(?:as\s+|marked\s+(?:as\s+)?)?['\"`]?(?P<state>[a-z][\w-]{2,20})", re.I)
_ONLY_ADJ = re.compile(r"\bonly\s+(?:(?P<verb>[a-z]{3,})\s+)?(?:an?\s+|the\s+)?['\"`]?(?P<state>[a-z][\w-]{2,20})['\"`]?\s+(?P<noun>[a-z]{3,}?)s?\b", re.I)
_NOT_A_STATE = frozenset("not the and for that this one two three any all each every more most few their your its own same other "
                         "when if after before once with from".split())
_MODALS = frozenset("may can should must will you we they to".split())
# "A specialist visit (cardiology, dermatology) needs a referral on file: ... without one do not book": an action barred
# while the record the run read holds no such thing (referral: null).
_ON_FILE = re.compile(r"\b(?:needs?|requires?|must\s+have)\s+(?:an?\s+|the\s+|their\s+|its\s+)?(?P<thing>(?:[a-z]+\s+){0,2}?[a-z]{4,})\s+"
                      r"(?:on\s+file|on\s+record|in\s+place|recorded|in\s+the\s+system)\b", re.I)
_BARRING = re.compile(r"\b(?:do\s+not|don'?t|never|must\s+not|may\s+not|cannot|can't|before)\s+([a-z]{3,})", re.I)
_PLAIN_ADJECTIVES = frozenset("signed valid current active written second prior separate formal".split())
# "A patient under 18 is booked with their guardian named in book_appointment's guardian": an action on a record past
# an age that must carry a person or thing.
_AGED = re.compile(r"\b(?P<op>under|below|younger\s+than|over|above|older\s+than)\s+(?P<n>\d{1,3})(?:\s+years?(?:\s+old)?)?\s+(?:is|are|must\s+be|"
                   r"should\s+be|may\s+only\s+be|can\s+only\s+be|gets?|get)\s+(?P<verb>[a-z]{3,})\b[^.\n]{0,50}?\bwith\s+(?:their|his|her|its|"
                   r"the|a|an)\s+(?P<thing>[a-z]{3,})\b(?:[^.\n]{0,40}?\b(?:in|as)\s+`?[a-z][\w]*`?'s\s+(?P<arg>[a-z_]{3,}))?", re.I)
# "After booking, send the patient a reminder with send_reminder": a call the rules ask for after an action.
_AFTER = re.compile(r"\b(?:after|once)\s+(?:each\s+|every\s+|a\s+|an\s+|the\s+|you\s+have\s+|you've\s+)?(?P<deed>[a-z]{3,})\b[^.\n]{0,80}?"
                    r"\b(?:with|using|via|call|calling|run|use)\s+`?(?P<tool>[a-z][a-z0-9]*_[a-z0-9_]+)`?", re.I)
# "Once a pay period is locked it stays as it is", "once an invoice has been paid, it is final": no action on a
# record in that state.
_FROZEN = re.compile(r"\bonce\s+(?:an?\s+|the\s+)?(?P<noun>(?:[a-z]+\s+){0,2}?[a-z]{3,})\s+(?:is|has\s+been|gets|was|are|have\s+been)\s+"
                     r"(?P<state>[a-z]{4,})\b,?\s+(?:it\s+|they\s+)?(?:stays?\s+as\s+(?:it\s+is|is)|stays?\s+(?:unchanged|untouched|closed|locked)|"
                     r"(?:is|are)\s+final|can(?:no|')t\s+be\s+(?:changed|edited|modified|touched|adjusted|amended)|(?:must|may)\s+not\s+be\s+"
                     r"(?:changed|edited|modified|touched|adjusted|amended)|(?:is|are)\s+not\s+to\s+be\s+(?:changed|touched)|no\s+longer\s+changes?|"
                     r"(?:is|are)\s+read-only|(?:is|are)\s+frozen)", re.I)
# "Do not call swap_sim unless ... verify_pin came back with verified: true": an action allowed by one value of a
# named check's answer.
_UNLESS = re.compile(r"\b(?:do\s+not|don'?t|never|must\s+not|may\s+not)\s+(?:call\s+|use\s+|run\s+)?`?(?P<act>[a-z][\w]*)`?\b[^.\n]{0,160}?"
                     r"\bunless\b[^.\n]{0,160}?\b`?(?P<check>[a-z][a-z0-9]*_[a-z0-9_]+)`?\s+(?:came\s+back|comes\s+back|returns?|returned|"
                     r"answers?|answered|says?|said|reports?|reported|shows?|showed|gives?|gave)\s+(?:with\s+)?`?(?P<field>[a-z_]+)`?\s*[:=]\s*"
                     r"['\"`]?(?P<value>[\w-]+(?:\.\d+)?)", re.I)
# The conditions an "only" sentence sets on the record an action is on: "(balance_remaining of 0)", "whose status is
# 'active'", "(coi_expires) is still current", "error_rate is below 1%", "lines active for 60 days or more".
_COND_EQ = re.compile(r"\(\s*`?(?P<field>[a-z][a-z0-9_]*)`?\s+(?:of|=|==|is|:)\s+['\"`]?(?P<value>[\w.-]+)['\"`]?\s*\)", re.I)
_COND_SCOPE = re.compile(r"\b(?:where|when|if)\s+(?P<scope>[A-Za-z]{2,})\s+(?:applies|apply|is\s+required|is\s+needed|is\s+in\s+force)\b", re.I)
_COND_WITH = re.compile(r"\bwith\s+`?(?P<field>[a-z][a-z0-9]*_[a-z0-9_]+)`?\s*(?:=|==|:|set\s+to)\s*['\"`]?(?P<value>[\w.-]+)", re.I)
_COND_WHOSE = re.compile(r"\b(?P<noun>[a-z]{3,}?)s?\s+whose\s+(?P<field>(?:[a-z]+\s+){0,2}?[a-z_]+)\s+(?:is|are|=)\s+['\"`](?P<value>[\w -]{2,30})['\"`]", re.I)
_COND_CURRENT = re.compile(r"\(\s*`?(?P<field>[a-z][a-z0-9_]*)`?\s*\)\s+(?:is|are)\s+(?:still\s+)?(?:current|valid|in\s+date|unexpired|not\s+expired)\b", re.I)
_COND_BOUND = re.compile(r"\b`?(?P<field>[a-z][a-z0-9]*_[a-z0-9_]+)`?\s+(?:is\s+|are\s+|stays?\s+)?(?P<op>below|under|less\s+than|above|over|more\s+than|"
                         r"at\s+least|at\s+most)\s+(?P<bound>\d[\d,]*(?:\.\d+)?)\s*(?P<unit>%|ms\b|s\b)?", re.I)
_COND_AGE = re.compile(r"\b(?P<what>active|open|opened|activated|registered|held|employed|enrolled)\s+(?:for\s+)?(?P<n>\d+)\s+"
                       r"(?P<unit>day|week|month|year)s?\s+or\s+(?:more|longer)", re.I)
# "Before you call update_bank_details, text the employee a one-time code with send_verification_code": a call the
# rules ask for before an action.
_BEFORE_CALL = re.compile(r"\bbefore\s+(?:you\s+)?(?:call(?:ing)?|use|using|run(?:ning)?|invoke|invoking)\s+`?(?P<act>[a-z][a-z0-9]*_[a-z0-9_]+)`?"
                          r"\s*,?[^.\n]{0,120}?\b(?:with|using|via|call|calling|run|use)\s+`?(?P<need>[a-z][a-z0-9]*_[a-z0-9_]+)`?", re.I)
# "Join raw.orders to raw.customers on customer_id": the key two tables are joined on.
_JOIN_ON = re.compile(r"\bjoin\s+`?([\w.]+)`?\s+(?:to|with|and|onto)\s+`?([\w.]+)`?\s+(?:on|by|using)\s+`?([a-z_][\w]*)`?", re.I)
# "Pay an invoice only when match_po answers 'matched'": an action allowed by one answer of a named check.
_GATE = re.compile(r"\b([a-z]+)\b[^.;\n]{0,60}?\bonly\s+(?:when|if|after|once)\s+(?:the\s+)?`?([a-z][\w.]*)`?\s+(?:answers|returns|says|"
                   r"reports|gives|shows|comes\s+back|responds)(?:\s+with)?\s+['\"\u201c`]?([\w -]{2,30}?)['\"\u201d`]?(?=[\s.,;:)]|$)", re.I)
# "File a new issue with file_issue only for a bug the repro agent reproduced": an action allowed by one verdict of a
# named agent or tool.
_GATE_BY = re.compile(r"\b([a-z]+)\b[^.;\n]{0,60}?\bonly\s+(?:for|on|about)\s+(?:a|an|the)\s+\w+\s+(?:that\s+|which\s+)?(?:the\s+)?"
                      r"([a-z][a-z_ ]{2,30}?)\s+([a-z]{4,}ed)\b", re.I)
# "Refunds only within 30 days of delivery", "returns are accepted within 14 days after purchase" ({0}: the action's
# words)
_WINDOW = (r"\b(?:{0})\b[^.;\n]{{0,60}}?\bwithin\s+(\d+)[\s-]*(hour|business\s+day|day|week|month|year)s?\s+"
           r"(?:of|after|from|since)\s+(?:the\s+|its\s+|their\s+)?([a-z]+)")
# "One exchange per order", "at most 2 refunds per order", "only one cancellation per booking"
_PER = (r"\b(?:(?:only|at\s+most|no\s+more\s+than|a\s+maximum\s+of)\s+)?(one|two|three|\d+|a\s+single)\s+(?:[a-z]+\s+)?(?:{0})\s+"
        r"per\s+([a-z]+)(?:\s+per\s+([a-z]+))?")
_COUNT_WORDS = {"one": 1, "a single": 1, "two": 2, "three": 3}


class Stop(NamedTuple):
    """A rule stopping an action on what a reading answered: "(get_ci_status) Failed or still running = we don't ship",
    "During a change freeze nothing goes to production", "If the dry run says it takes a lock on a table of more than
    1M rows, stop ... - no deploy", "a hit goes to counsel ... and the draft is not sent", "If the estimated total would
    take the centre past what it has left, ... it never reaches the buyer"."""

    said: str
    tools: tuple[str, ...]  # the tools its sentence (or the one before it, on the same line) names: the readings
    verbs: tuple[str, ...]  # the deeds it stops ("ship", "deploy", "send")
    objects: tuple[str, ...]  # where nothing may go ("production"), whom it never reaches ("buyer")
    words: tuple[str, ...]  # its condition's words: a value a reading answers ("failed"), a list it fills ("freeze")
    bounds: tuple[tuple[str, bool, float], ...]  # (the counted noun, above?, the bound): "more than 1M rows"
    left: bool  # the action's amount past what a reading says is left ("past what it has left", "the remaining budget")


class Rules(NamedTuple):
    """The rules of one instructions text, each as (the rule's words as written, then its parts)."""

    limits: tuple[tuple[str, float, str, str | None], ...]  # (said, limit, unit word, currency code or None)
    criteria: tuple[tuple[str, tuple[str, ...], float, bool], ...]  # (said, the measure's words, bound, must stay below)
    barred: tuple[tuple[str, str, str], ...]  # (said, the class as named, the verb barred for it)
    only: tuple[tuple[str, str, str, str], ...]  # (said, the class allowed, the group, the rule's sentence)
    without: tuple[tuple[str, str, str, tuple[str, ...]], ...]  # (said, verb, the thing needed, words of its object)
    record_caps: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]  # (said, the action's words, the record's amount words)
    gates: tuple[tuple[str, str, str, str], ...]  # (said, verb, the check's name, the answer allowing it)
    gates_by: tuple[tuple[str, str, tuple[str, ...], str], ...]  # (said, verb, the gate's words, its verdict)
    net_of: tuple[tuple[str, str, str], ...]  # (said, the gross amount's word, the word of what comes off it)
    # (said, verb, the field, the value it must have, and the rule's scope: (measure, above?, bound) or None)
    field_gates: tuple[tuple[str, str, str, str, tuple[str, bool, float] | None], ...]
    not_covered: tuple[tuple[str, str, tuple[str, ...]], ...]  # (said, the kind of loss, the words of the cover it needs)
    joins: tuple[tuple[str, str, str, str], ...]  # (said, a table, the other, the key they are joined on)
    # (said, the deed, the figure past which, the thing it needs, how many, from how many of what: "quotes from two
    # vendors" - 2, "vendor")
    needs_over: tuple[tuple[str, str, float, str, int, str | None], ...]
    flagged: tuple[tuple[str, str, str], ...]  # (said, the flag, the verb barred on a record it flags)
    not_again: tuple[tuple[str, tuple[str, ...], str], ...]  # (said, the states, the verb barred on a record in one)
    # (said, the later date's word, the earlier's, the most days between, the field of the exception and its word)
    too_late: tuple[tuple[str, str, str, float, str | None, str | None], ...]
    only_state: tuple[tuple[str, str, str, str], ...]  # (said, verb, the record's noun, the one state allowed)
    on_file: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...]  # (said, verb, the thing's words, scope words)
    # (said, verb, the age past which, above?, the thing the action must carry, the argument it goes in)
    aged: tuple[tuple[str, str, float, bool, str, str], ...]
    after: tuple[tuple[str, str, str], ...]  # (said, the deed, the tool to call after it)
    frozen: tuple[tuple[str, tuple[str, ...], str], ...]  # (said, the record's noun words, the state no action may touch)
    unless: tuple[tuple[str, str, str, str, str], ...]  # (said, the action, the check, its field, the value allowing it)
    before_call: tuple[tuple[str, str, str], ...]  # (said, the action, the call it needs before it)
    # (said, the tools it names, the verb before or after "only", its record's noun, the conditions (field, op, value),
    # the tools to call instead when they fail: "Otherwise ... with request_renewal")
    conditions: tuple[tuple[str, tuple[str, ...], str | None, str | None, tuple[tuple[str, str, object], ...], tuple[str, ...]], ...]
    # (said, the measure's words, the field of the record acted on it must not pass): "Never tender a load heavier
    # than the carrier's free_capacity_kg"
    than_field: tuple[tuple[str, tuple[str, ...], str], ...]
    # (said, the date's words, the days' field, the latest date's field): "the pickup date plus transit_days must not
    # fall after deliver_by"
    plus_after: tuple[tuple[str, tuple[str, ...], str, str], ...]
    # (said, the value a call gives, the measure's words, above?, the bound): a decision table's row "| advance |
    # rubric total of 12 or more (out of 20) |"
    table_rows: tuple[tuple[str, str, tuple[str, ...], bool, float], ...]
    # (said, the things a decision's reason may not rest on): "Never base a decision or its reason on age, graduation
    # year, gender, ..."
    not_based_on: tuple[tuple[str, tuple[str, ...]], ...]
    # (said, the deed's words, the share, the words of the record's figure): "Pay advances are capped at half of the
    # employee's last net pay"
    share_caps: tuple[tuple[str, tuple[str, ...], float, tuple[str, ...]], ...]
    # (said, the state's words, the most minutes): "a crew that has been on shift for more than 16 hours must not be
    # dispatched"
    too_long: tuple[tuple[str, tuple[str, ...], float], ...]
    dated_by: tuple[tuple[str, str, str], ...]  # (said, the tool, the word of the record's date it must be called at)
    # the tools of a written procedure's steps in order, each with whether the step plainly asks for it ("Check
    # get_adcvd for the code", "Start with get_shipment") - not one it makes conditional ("If ..., dry-run it")
    procedure: tuple[tuple[str, bool], ...]
    must_include: tuple[tuple[str, str, str], ...]  # (said, the field one member must hold, its value)
    # (said, the noun a record may hold several of, the verb to ask which before, what they must share to count:
    # "more than one order for the event" - event)
    which: tuple[tuple[str, str, str, str | None], ...]
    stops: tuple[Stop, ...]  # a reading's outcome that stops an action: "Failed or still running = we don't ship"
    # (said, the column every aggregate query must filter on, whether the user may ask to include them): "Test accounts
    # (mart.customers.is_test) are excluded from every revenue figure unless the person explicitly asks to include them"
    excluded: tuple[tuple[str, str, bool], ...]
    # (said, the field to use, the field not to): "A customer's region is their billing_region in mart.customers, not the
    # order's ship_region"
    instead_of: tuple[tuple[str, str, str], ...]
    # (said, the noun of the record named in a call, the states it must not be in): "never from a supplier that is
    # suspended or on probation"
    state_barred: tuple[tuple[str, str, tuple[str, ...]], ...]
    # (said, the steps in order, the verb, the state each earlier one must be in): "Inspections go in this order: footing,
    # foundation, framing, insulation, final - never schedule one before every earlier one has passed"
    in_order: tuple[tuple[str, tuple[str, ...], str, str], ...]
    # (said, the date's words, the most days, the tools and values that stand instead): "Labs collected more than 90
    # days before the screening date can't be used: call request_labs and record the pre-screen as pending"
    too_old: tuple[tuple[str, tuple[str, ...], int, tuple[str, ...], tuple[str, ...]], ...]
    say_more: tuple[str, ...]  # a rule asking a message to say when a thing costs more than before: "saying plainly when it costs more"
    # (said, the exception's words, the reasons it names as none - each its words): "Work, travel or a busy diary are
    # not emergencies" - ("emergencies",), ("work", "travel", "busy diary")
    not_reasons: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]
    # (said, the exception's words, the record's field it rests on, the value it needs): "The amendment fee is waived
    # only when the booking's operator_change is true" - ("waived",), "operator_change", "true"
    field_grants: tuple[tuple[str, tuple[str, ...], str, str], ...]


@functools.lru_cache(maxsize=64)
def read(text: str) -> Rules:
    """Every rule `text` writes (see the module's docstring), found once per text."""
    limits = [(m.group(0), limit, m.group(2).lower(), None) for m in _LIMIT.finditer(text)
              if (limit := _number(m.group(1))) is not None]
    limits += [(m.group(0), limit, "", m.group(1).upper()) for m in _MONEY_LIMIT.finditer(text)
               if (limit := _number(m.group(2))) is not None]
    barred = [(m.group(0).strip(), m.group(1), m.group(3).lower()) for m in _BARRED_CLASS.finditer(text)]
    barred += [(m.group(0).strip(), m.group(1), m.group(2).lower()) for m in _BARRED_VALUE.finditer(text)]
    barred += [(m.group(0).strip(), m.group("value"), m.group("verb").lower()) for m in _BARRED_BRACKET.finditer(text)]
    return Rules(
        limits=tuple(limits),
        criteria=_criteria(text),
        barred=tuple(barred),
        only=tuple(_only(text)),
        without=tuple(_without(text)) if "without" in text else (),
        record_caps=tuple((m.group(0).strip(), tuple(w for w in re.findall(r"[a-z]{4,}", m.group(1).lower()) if w not in FILLER), tuple(w for w in _RECORD_AMOUNTS if w in m.group(2).lower()))
                          for m in _AT_MOST_RECORD.finditer(text)),
        gates=tuple((m.group(0).strip(), m.group(1).lower(), gate, m.group(3).strip().lower())
                    for m in _GATE.finditer(text) if (gate := _gate_named(text, m))) if " only " in text else (),
        gates_by=tuple((m.group(0).strip(), m.group(1).lower(), tuple(m.group(2).lower().split()), m.group(3).lower())
                       for m in _GATE_BY.finditer(text)) if re.search(r"\bonly\s+(?:for|on|about)\b", text) else (),
        net_of=tuple(_net_of(text)) if re.search(r"\b(?:less|minus|net\s+of|after\s+(?:subtracting|deducting))\s", text) else (),
        field_gates=tuple(_field_gates(text)) if " be " in text and "(" in text else (),
        not_covered=tuple((m.group(0).strip(), m.group("what").lower(), tuple(re.findall(r"[a-z]{3,}", m.group("needs").lower())))
                          for m in _NOT_COVERED.finditer(text)) if " not " in text or " never " in text else (),
        joins=tuple((m.group(0).strip(), m.group(1).lower(), m.group(2).lower(), m.group(3).lower()) for m in _JOIN_ON.finditer(text)),
        needs_over=tuple((m.group(0).strip(), m.group("deed").lower(), bound, m.group("thing").lower().split()[-1], *_how_many(text[m.end():m.end() + 60]))
                         for m in _NEEDS_OVER.finditer(text) if (bound := _number(m.group("bound"))) is not None),
        flagged=tuple((m.group(0).strip(), m.group("flag").lower(), m.group("verb").lower()) for m in _FLAGGED.finditer(text)),
        not_again=tuple((m.group(0).strip(), tuple(w for w in re.findall(r"[a-z]+", m.group("states").lower()) if w not in ("or", "and")),
                         m.group("verb").lower()) for m in _NOT_AGAIN.finditer(text)) if " again" in text else (),
        too_late=tuple((m.group(0).strip(), m.group("done").lower()[:-2].rstrip("e"), m.group("event").lower(),
                        int(m.group("n")) * PERIOD_DAYS[m.group("unit").lower()], m.group("field"), m.group("what"))
                       for m in _LATE.finditer(text)) if "more than" in text else (),
        only_state=tuple(_only_state(text)) if "only" in text else (),
        on_file=tuple(_on_file(text)),
        aged=tuple((m.group(0).strip(), _stem(m.group("verb")), float(m.group("n")), m.group("op").lower().split()[0] in ("over", "above", "older"),
                    m.group("thing").lower(), (m.group("arg") or m.group("thing")).lower()) for m in _AGED.finditer(text)),
        after=tuple((m.group(0).strip(), _stem(m.group("deed")), m.group("tool")) for m in _AFTER.finditer(text)),
        frozen=tuple((m.group(0).strip(), tuple(w for w in m.group("noun").lower().split() if len(w) >= 3), m.group("state").lower())
                     for m in _FROZEN.finditer(text)) if "once" in text.lower() else (),
        unless=tuple((m.group(0).strip(), m.group("act").lower(), m.group("check"), m.group("field").lower(), m.group("value").lower())
                     for m in _UNLESS.finditer(text)) if "unless" in text else (),
        conditions=tuple(_conditions(text)) if "only" in text else (),
        before_call=tuple((m.group(0).strip(), m.group("act"), m.group("need")) for m in _BEFORE_CALL.finditer(text)
                          if m.group("act") != m.group("need"))
                    + tuple((m.group(0).strip(), "*", m.group("need")) for m in _NOTHING_BEFORE.finditer(text))
                    + tuple((m.group(0).strip(), "~" + _deed_stem(m.group("deed")), m.group("need")) for m in _CALL_BEFORE.finditer(text)
                            if m.group("deed").lower() not in _NOT_A_DEED)
                    + tuple((m.group(0).strip(), "~" + _deed_stem(m.group("deed")), m.group("need")) for m in _BEFORE_DEED.finditer(text))
                    if "efore" in text else (),
        than_field=tuple((m.group(0).strip(), _MEASURES[m.group("cmp").lower()], m.group("field").lower())
                         for pattern in (_THAN_FIELD, _MORE_THAN_FIELD) for m in pattern.finditer(text)) if " than " in text else (),
        plus_after=tuple((m.group(0).strip(), tuple(w for w in re.findall(r"[a-z]{3,}", m.group("a").lower()) if w not in FILLER),
                          m.group("b").lower(), m.group("c").lower()) for m in _PLUS_AFTER.finditer(text)) if " plus " in text else (),
        table_rows=tuple(_table_rows(text)) if "|" in text else (),
        not_based_on=tuple((m.group(0).strip(), tuple(i for i in (re.sub(r"^(?:or|and)\s+|\s+", " ", p.strip().lower()).strip()
                                                                   for p in re.split(r",|\bor\b|\band\b", m.group("things")))
                                                       if len(i) >= 3 and i not in ("any", "the", "their", "his", "her")))
                           for m in _NOT_BASED_ON.finditer(text)) if " on " in text else (),
        share_caps=tuple(_share_caps(text)) if " of " in text else (),
        too_long=tuple((m.group(0).strip(), tuple(w for w in re.findall(r"[a-z]{3,}", m.group("state").lower()) if w not in FILLER),
                        float(m.group("n")) * MINUTES[m.group("unit").lower()]) for m in _TOO_LONG.finditer(text))
                 if "more than" in text else (),
        dated_by=tuple((m.group(0).strip(), m.group("tool"), m.group("word").lower()) for m in _DATED_BY.finditer(text)) if " date" in text else (),
        procedure=_procedure(text),
        must_include=tuple((m.group(0).strip(), m.group("field").lower(), m.group("value").lower().rstrip(".")) for m in _MUST_INCLUDE.finditer(text))
                     if "at least one" in text else (),
        which=tuple((m.group(0).strip(), re.sub(r"(?:es|s)$", "", m.group("noun").lower().split()[-1]), _stem(m.group("verb")),
                     q.group(1).lower() if (q := re.match(r"\s+(?:for|of|on|in)\s+(?:the|that|this|one|a|an)\s+([a-z]{3,})", text[m.end("noun"):])) else None)
                    for m in _WHICH.finditer(text) if re.search(r"\bwhich\b", m.group(0), re.I))
              if re.search(r"\bwhich\b", text) else (),
        stops=tuple(_stops(text)) if _STOP.search(text) else (),
        excluded=tuple((_said(text, m), m.group("col").lower(), bool(re.search(r"\bunless\b[^.\n]{0,60}\binclud", text[m.start():m.end() + 80], re.I)))
                       for m in _EXCLUDED.finditer(text)) if "exclu" in text or " out " in text else (),
        state_barred=tuple((_said(text, m), m.group("noun").lower(), tuple(s for s in (re.sub(r"^(?:on|in|under)\s+", "", p.strip().lower())
                                                                                   for p in re.split(r",|\bor\b", m.group("states"))) if len(s) >= 3))
                           for m in _STATE_BARRED.finditer(text)) if "never" in text or " not " in text else (),
        in_order=tuple((_said(text, m), tuple(i.strip().lower() for i in re.split(r",|\band\b|\bthen\b", m.group("items")) if i.strip()),
                        _stem(m.group("verb")), m.group("state").lower()) for m in _IN_ORDER.finditer(text)) if " order" in text else (),
        too_old=tuple(_too_old(text)) if "more than" in text else (),
        say_more=tuple(_said(text, m) for m in _SAY_MORE.finditer(text)) if "more" in text else (),
        not_reasons=tuple(_not_reasons(text)) if _NOT_REASON_GATE.search(text) else (),
        field_grants=tuple(_field_grants(text)) if " only " in text else (),
        instead_of=tuple((_said(text, m), m.group("good").lower(), m.group("bad").lower()) for m in _INSTEAD_OF.finditer(text)
                         if m.group("good").lower() != m.group("bad").lower()) if ", not " in text else (),
    )


def _said(text: str, m: re.Match) -> str:
    """The whole sentence a rule's match is in, as the rule to quote."""
    start, end = sentence_at(text, m.start(), m.end())
    return text[start:end].strip()


# "Labs collected more than 90 days before the screening date can't be used: call request_labs ...", "If the latest
# stub's pay_date is more than 30 days before the decision date, don't decide: record "suspended" ...".
_TOO_OLD = re.compile(r"\b(?P<what>(?:[a-z_']+\s+){0,3}?[a-z_']+)\s+(?:is\s+|are\s+|was\s+|were\s+)?more\s+than\s+(?P<n>\d{1,4})\s+"
                      r"(?P<unit>days?|weeks?|months?)\s+(?:before|prior\s+to|older\s+than)\s+(?:the\s+)?(?:[a-z]+\s+)?(?:date|day|today)\b"
                      r"[^.:\n]{0,30}?(?P<stop>can'?t\s+be\s+used|cannot\s+be\s+used|may\s+not\s+be\s+used|must\s+not\s+be\s+used|"
                      r"don'?t\s+(?:decide|use\s+(?:it|them))|do\s+not\s+(?:decide|use\s+(?:it|them)))", re.I)


def _too_old(text: str):
    for m in _TOO_OLD.finditer(text):
        end = sentence_at(text, m.start(), m.end())[1]
        rest = text[m.end():end]  # what stands instead: "call request_labs and record the pre-screen as pending"
        words = tuple(w for w in re.findall(r"[a-z_]{3,}", m.group("what").lower().replace("'s", "")) if w not in FILLER
                      and w not in ("latest", "last", "the", "its", "their", "if"))
        values = tuple(v.lower() for v in re.findall(r"['\"\u201c]([a-z_ ]{3,20})['\"\u201d]|\bas\s+([a-z_]{3,20})\b", rest) for v in v if v)
        n = int(int(m.group("n")) * PERIOD_DAYS[m.group("unit").lower().rstrip("s")])
        if words:
            yield _said(text, m), words, n, tuple(TOOL_NAME.findall(rest)), values


def _gate_named(text: str, m: re.Match) -> str | None:
    """The check a gate waits on: the tool it names, or - "Assign only after it comes back 'granted'" - the tool the
    sentence before it on the same line names last ("request a lockout ... with request_lockout")."""
    if m.group(2).lower() not in ("it", "this", "that", "they"):
        return m.group(2)
    line = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
    return next(reversed(TOOL_NAME.findall(line)), None)


def _deed_stem(word: str) -> str:
    """A deed's plain form from how a rule writes it: filing -> file, refills -> refill, booking -> book."""
    stem = _stem(word)
    return stem + "e" if word.lower().endswith("ing") and len(stem) <= 3 else stem


def _how_many(after: str) -> tuple[int, str | None]:
    """How many of a needed thing, and from how many of what, written right after it: " from two vendors" -> 2, vendor."""
    m = re.match(r"\s+from\s+(?:at\s+least\s+)?(one|two|three|\d)\s+(?:different\s+|separate\s+)?([a-z]{3,}?)s?\b", after, re.I)
    if m is None:
        return 1, None
    return _COUNT_WORDS.get(m.group(1).lower()) or int(m.group(1)), m.group(2).lower()


def _stem(word: str) -> str:
    """A verb's plain form, near enough to compare first letters: booking, booked, books -> book."""
    word = word.lower()
    for end in ("ing", "ed", "s"):
        if word.endswith(end) and len(word) - len(end) >= 3:
            return word[: -len(end)]
    return word


def _not_reasons(text: str):
    """The reasons a rule names as none for its exception, and the exception's words: "Work, travel or a busy diary
    are not emergencies" (an exception the rules grant elsewhere: "unless ... because of a medical emergency"), "It is
    waived only for patrons whose type is faculty - not for teaching assistants, thesis deadlines or any other reason"
    (the exception: waived)."""
    for m in _NOT_REASONS.finditer(text):
        what = tuple(w for w in re.findall(r"[a-z]{4,}", m.group("what").lower()) if w not in FILLER)
        if not what or re.search(r"(?:able|ible)$", what[-1]):
            continue  # "Monthly invoices are not refundable": a class barred, no reasons named
        # (an exception the text grants: its noun in a sentence of "unless", "except", "only if" - not any "X is not
        # Y": "The deposit is not refundable" names no reason)
        granted = re.compile(r"\b(?:unless|except\w*|only\s+(?:if|when|for)|waive\w*)\b[^.\n]{0,160}?\b" + re.escape(what[0][:6])
                             if what else "$^", re.I)
        reasons = _reasons(m.group("list"))
        if what and reasons and (what[0].startswith("exception") or granted.search(text)):
            yield m.group(0).strip(), what, reasons
    for m in _NOT_FOR.finditer(text):
        reasons = _reasons(m.group("list"))
        if reasons:
            yield m.group(0).strip(), (m.group("what").lower(),), reasons


def _field_grants(text: str):
    """The exceptions granted only on a record's field: "The amendment fee is waived only when the booking's
    operator_change is true", "It is waived only for patrons whose type is faculty", "only members (the vessel
    record's `owner.member` is true) may sleep aboard" - not one held to a season or a date as well, which the record
    alone cannot settle."""
    for sentence in re.split(r"\n|(?<=[.!?])\s+(?=[A-Z])", text):
        if " only " not in sentence or _SCOPED.search(sentence):
            continue
        what = _GRANT_WORD.search(sentence)
        field = _GRANT_FIELD.search(sentence)
        if what is None or field is None:
            continue
        words = tuple(w for w in re.findall(r"[a-z]{3,}", (what.group("done") or what.group("deed")).lower()) if w not in FILLER)
        name, value = (field.group("field"), field.group("value")) if field.group("field") else (field.group("whose"), field.group("is"))
        if words:
            yield sentence.strip()[:300], words, name.lower(), value.lower()


def _reasons(listed: str) -> tuple[str, ...]:
    """The reasons of a list ("teaching assistants, thesis deadlines or any other reason"), each its telling words."""
    out = []
    # (a list has commas: "Work, travel or a busy diary"; one reason may hold an "or" of its own: "A student telling you
    # their visa may be late or refused")
    for item in re.split(r",|;|/|\bor\b|\band\b", listed.lower()) if "," in listed else [listed.lower()]:
        if re.search(r"\b(?:other|else)\b", item):
            continue  # "or any other reason": no reason of its own
        words = [w for w in re.findall(r"[a-z][a-z']{3,}", item) if w not in FILLER and w not in _NO_REASON_WORDS]
        if words:
            out.append(" ".join(words))
    return tuple(out)


def _only_state(text: str):
    for pattern in (_ONLY_THAT, _ONLY_ADJ):
        for m in pattern.finditer(text):
            verb = m.group("verb")
            if verb is None or verb.lower() in ("a", "an", "the"):
                # the verb before "only": "Book only a slot", "you may only cancel ..."
                before = [w for w in re.findall(r"[a-z]+", text[max(0, m.start() - 40):m.start()].lower())]
                while before and before[-1] in _MODALS:
                    before.pop()
                verb = before[-1] if before else None
            state, noun = m.group("state").lower(), m.group("noun").lower()
            if verb and state not in _NOT_A_STATE and noun not in _NOT_A_STATE and not state.isdigit():
                yield m.group(0).strip(), _stem(verb), noun, state


def _conditions(text: str):
    for sentence in re.split(r"\n|(?<=[.!?])\s+(?=[A-Z])", text):
        only = re.search(r"\bonly\b", sentence)
        if only is None:
            continue
        conds: list[tuple[str, str, object]] = []
        conds += [(m.group("field").lower(), "eq", m.group("value").lower()) for m in _COND_EQ.finditer(sentence)]
        conds += [(m.group("field").lower(), "eq", m.group("value").lower()) for m in _COND_WITH.finditer(sentence)]
        # (not the case the sentence opens on: "A submission whose status is 'withdrawn' and that names resubmitted_as
        # ... work only on the new one" says what to do with such a one, not that only such a one may be worked on)
        opening = re.match(r"\s*(?:\d+[.)]\s*|[-*]\s*)?(?:a|an|any|each|every|the)\s+[a-z]+\s+whose\b", sentence, re.I)
        conds += [(m.group("field").lower().split()[-1], "eq", m.group("value").lower()) for m in _COND_WHOSE.finditer(sentence)
                  if not (opening and m.start() < only.start() and m.start() <= opening.end())]
        conds += [(m.group("field").lower(), "current", None) for m in _COND_CURRENT.finditer(sentence)]
        for m in _COND_BOUND.finditer(sentence):
            op = m.group("op").lower().split()[0]
            below = op in ("below", "under", "less") or m.group("op").lower() == "at most"
            conds.append((m.group("field").lower(), "below" if below else "above", (float(m.group("bound").replace(",", "")), m.group("unit") == "%")))
        conds += [(m.group("what").lower()[:5], "age", int(m.group("n")) * PERIOD_DAYS[m.group("unit").lower()]) for m in _COND_AGE.finditer(sentence)]
        if not conds:
            continue
        # the case the rule is written for: "where ADR applies" - a record of the run must say it does
        conds += [(m.group("scope").lower(), "applies", None) for m in _COND_SCOPE.finditer(sentence)]
        # the verb the rule keeps: after "only" ("promote only when" - before it), the one before it ("We only buy")
        after = re.match(r"\s+([a-z]{3,})", sentence[only.end():])
        before = [w for w in re.findall(r"[a-z]+", sentence[max(0, only.start() - 40):only.start()].lower()) if w not in _MODALS]
        verb = before[-1] if before and before[-1] not in _NOT_A_VERB else (after.group(1).lower() if after else None)
        verb = None if verb in _NOT_A_VERB else verb
        # "A refill is allowed only while ...": the deed is the thing allowed
        allowed = re.search(r"\b([a-z]{3,})\s+(?:is|are)\s+(?:allowed|permitted|possible)\s*$", sentence[:only.start()], re.I)
        verb = allowed.group(1).lower() if allowed else verb
        whose = _COND_WHOSE.search(sentence)
        tools = tuple(dict.fromkeys(TOOL_NAME.findall(sentence)))
        # what to do instead, in the sentence after: "Otherwise do not refill: send ... with request_renewal"
        after_text = text[text.find(sentence) + len(sentence):][:300]
        instead = re.match(r"\s*(?:otherwise|if\s+not|else|failing\s+that)\b[^.\n]*", after_text, re.I)
        remedies = tuple(TOOL_NAME.findall(instead.group(0))) if instead else ()
        yield (sentence.strip()[:300], tools, _stem(verb) if verb else None, whose.group("noun").lower() if whose else None,
               tuple(conds), remedies)


def _stops(text: str):
    for line in text.split("\n"):
        sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z(\"'])", line)
        for n, sentence in enumerate(sentences):
            if re.search(r"\b(?:unless|only|until|without|except)\b|\bbefore\s+(?:every|all|each|any)\b", sentence, re.I):
                continue  # a gate an answer opens ("unless verify_pin came back ..."): _UNLESS, _conditions; an order to
                # keep ("never schedule one before every earlier one has passed") is no stop on what a reading lists
            for clause in sentence.split(";"):
                stops = list(_STOP.finditer(clause))
                if not stops:
                    continue
                verbs = tuple(dict.fromkeys(_IRREGULAR.get(v, _stem(v)) for m in stops for v in (m.group("v1"), m.group("v2"),
                                                                                                 m.group("v3"), m.group("v4")) if v))
                objects = tuple(dict.fromkeys(o.lower() for m in stops for o in (m.group("o1"), m.group("o3")) if o))
                # the condition: an opening "If ..., " up to its comma, else the clause before the stop
                opening = re.match(r"\s*(?:if|when|whenever|during|once|where|should|any)\b[^,]{3,200}", clause, re.I)
                condition = opening.group(0) if opening else clause[:stops[0].start()]
                for m in stops:
                    condition = condition.replace(m.group(0), " ")
                words = tuple(dict.fromkeys(w for w in re.findall(r"[a-z]{3,}", condition.lower()) if w not in _CONDITION_FILLER))
                # an id the reading must not list: "If get_conflicts lists you, you must not score it"
                words += tuple(m.group(1).lower() for m in _LISTS_ID.finditer(condition))
                bounds = tuple((m.group("noun").lower(), m.group("op").lower() not in _BELOW, value)
                               for m in _STOP_BOUND.finditer(condition)
                               if (value := _scaled(m.group("n"), m.group("scale"))) is not None)
                left = _PAST_LEFT.search(condition) is not None
                tools = tuple(dict.fromkeys(TOOL_NAME.findall(" ".join(sentences[max(0, n - 1):n + 1]))))
                if tools and (words or bounds or left):
                    yield Stop(sentence.strip()[:300], tools, verbs, objects, words, bounds, left)


# "never from a supplier that is suspended or on probation": records a call may not name in a state.
_STATE_BARRED = re.compile(r"\b(?:never|do\s+not|don'?t|must\s+not)\s+(?:[a-z]+\s+){0,3}?(?:from|to|with|for|on|through|via)\s+(?:a|an|any)\s+"
                           r"(?P<noun>[a-z]{3,})\s+(?:that|which|who)\s+(?:is|are)\s+(?P<states>(?:(?:on|in|under)\s+)?[a-z_]{3,}"
                           r"(?:\s*(?:,|\bor\b)\s*(?:(?:on|in|under)\s+)?[a-z_]{3,}){0,3})", re.I)
# "Inspections go in this order: footing, foundation, framing, insulation, final - never schedule one before every
# earlier one has passed": steps in order, none done before the ones ahead of it are in a state.
_IN_ORDER = re.compile(r"\b(?:go|goes|come|comes|run|runs|happen|happens|are\s+done|are\s+booked)\s+in\s+(?:this|the\s+following)\s+order\s*:\s*"
                       r"(?P<items>[a-z][a-z /-]*(?:,\s*(?:and\s+|then\s+)?[a-z][a-z /-]*){1,9})\s*[-\u2013\u2014;:.(]\s*"
                       r"(?:[^.\n]{0,20}?)\b(?:never|do\s+not|don'?t)\s+(?P<verb>[a-z]{3,})\s+(?:one|any|a\s+step|the\s+next)\b[^.;\n]{0,20}?"
                       r"\bbefore\s+(?:every|all|each)\s+(?:earlier|previous|prior)\s+(?:one|step)s?\s+(?:has|have)\s+(?:been\s+)?(?P<state>[a-z]+)", re.I)
# "send_guest_email ... saying plainly when it costs more than before": a rise the message must tell.
_SAY_MORE = re.compile(r"\b(?:say|saying|tell|telling|state|stating|mention|mentioning|flag|flagging|point\s+out|pointing\s+out)\s+"
                       r"(?:[a-z]+\s+){0,3}?(?:when|if|whenever)\s+(?:it|the\s+[a-z]+|that)\s+(?:costs?|will\s+cost|comes?\s+to|is)\s+"
                       r"(?:more|higher)\b", re.I)
# "Test accounts (mart.customers.is_test) are excluded from every revenue figure": a column every figure filters on.
_EXCLUDED = re.compile(r"\(`?(?:[a-z_][a-z0-9_]*\.){0,2}(?P<col>[a-z][a-z0-9]*_[a-z0-9_]+)`?\)\s+(?:are|is)\s+(?:always\s+)?(?:excluded|"
                       r"left\s+out|filtered\s+out)\s+(?:from|of)\b[^.;\n]{0,60}", re.I)
# "their billing_region in mart.customers, not the order's ship_region": the field to use and the one it is not.
_INSTEAD_OF = re.compile(r"`?\b(?P<good>[a-z][a-z0-9]*_[a-z0-9_]+)`?(?:[^.;:\n]|\.(?=\w)){0,60}?,\s+not\s+(?:the\s+|its\s+|their\s+|an?\s+)?"
                         r"(?:[a-z]+'s\s+)?`?(?P<bad>[a-z][a-z0-9]*_[a-z0-9_]+)\b`?", re.I)


def _scaled(number: str, scale: str | None) -> float | None:
    value = _number(number)
    if value is None:
        return None
    return value * {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "bn": 1e9, "billion": 1e9}.get((scale or "").lower(), 1)


# What stops an action, in the words a rule writes it: "we don't ship", "don't deploy", "nothing goes to production",
# "- no deploy", "the draft is not sent", "it never reaches the buyer".
_STOP = re.compile(r"\b(?:we|you|i|they)\s+(?:don'?t|do\s+not|never|must\s+not|won'?t|will\s+not|cannot|can'?t|may\s+not)\s+"
                   r"(?P<v1>[a-z]{3,})"
                   r"|(?:^|[,:=(]\s*|\s[-\u2013\u2014]\s+|\bthen\s+)(?:do\s+not|don'?t|never)\s+(?:call\s+|use\s+|run\s+)?`?"
                   r"(?P<v2>[a-z][a-z_]{2,})"
                   r"|\bnothing\s+(?:goes|gets|is|leaves|ships)\s+(?:[a-z]+\s+)?(?:to|into)\s+(?P<o1>[a-z]{4,})"
                   r"|(?:[,:(]\s*|\s[-\u2013\u2014]\s+)no\s+(?P<v3>[a-z]{4,})\s*(?=$|[.,)])"
                   r"|\b(?P<o2>[a-z]{3,})\s+(?:is|are)\s+not\s+(?P<v4>sent|paid|shipped|[a-z]{3,}ed)\b"
                   r"|\bnever\s+(?:reaches|goes\s+to|gets\s+to|makes\s+it\s+to)\s+(?:the\s+)?(?P<o3>[a-z]{3,})", re.I)
_LISTS_ID = re.compile(r"\b(?:lists?|names?|includes?|contains?|flags?|mentions?)\s+(?:you\s+|us\s+|me\s+)?\(?\s*"
                       r"([A-Z][A-Z0-9]{0,5}-\d{1,8})\b")
_IRREGULAR = {"sent": "send", "paid": "pay", "made": "make", "sold": "sell", "told": "tell", "given": "give", "shipped": "ship"}
_STOP_BOUND = re.compile(r"\b(?P<op>more\s+than|over|above|greater\s+than|at\s+least|exceeding|less\s+than|under|below|fewer\s+than)"
                         r"\s+(?P<n>\d[\d,]*(?:\.\d+)?)\s*(?P<scale>k|m|bn|thousand|million|billion)?\s+(?P<noun>[a-z]{3,})", re.I)
_BELOW = ("less than", "under", "below", "fewer than")
_PAST_LEFT = re.compile(r"\b(?:past|over|beyond|exceeds?|exceeding|more\s+than|above)\s+(?:what\s+(?:it|they|the\s+[a-z]+)\s+(?:has|have)\s+"
                        r"left|(?:the|its|their)\s+(?:remaining|available)\b|(?:the|its|their)\s+[a-z]+\s+(?:left|remaining))", re.I)
_CONDITION_FILLER = frozenset("that this then with from into onto when where whenever during once should says said shows would "
                              "will have been their there them they what which while still also just only more than over "
                              "under less takes take goes your the and for any are was its has had but not you who how "
                              "get got one all can may out off per via".split())
# "Never tender a load heavier than the carrier's free_capacity_kg": a measure of what the action carries against a
# field of the record it is on.
_THAN_FIELD = re.compile(r"\b(?:never|don'?t|do\s+not|must\s+not|may\s+not|cannot|can't)\s+[a-z]{3,}\s+(?:a|an|the|any)\s+[a-z]{3,}\s+"
                         r"(?P<cmp>heavier|larger|bigger|longer|wider|taller|higher)\s+than\s+(?:the\s+|its\s+|their\s+)?"
                         r"(?:[a-z]{3,}'s\s+)?`?(?P<field>[a-z][a-z0-9]*_[a-z0-9_]+)`?", re.I)
# "A parcel must not weigh more than the quote's max_weight_kg": the same, said with the measure's verb.
_MORE_THAN_FIELD = re.compile(r"\b(?:must|may|should|can|shall)\s*(?:not|n't|never)\s+(?P<cmp>weigh|cost)\s+more\s+than\s+(?:the\s+|its\s+|"
                              r"their\s+)?(?:[a-z]{3,}'s\s+)?`?(?P<field>[a-z][a-z0-9]*_[a-z0-9_]+)`?", re.I)
_MEASURES = {"weigh": ("weight", "mass", "kg"), "cost": ("price", "cost", "amount", "total"),
             "heavier": ("weight", "mass", "kg"), "larger": ("size", "volume"), "bigger": ("size", "volume"), "longer": ("length",),
             "wider": ("width",), "taller": ("height",), "higher": ("height",)}
# "The pickup date plus transit_days must not fall after deliver_by": a date, days added, and the latest it may be.
_PLUS_AFTER = re.compile(r"\bthe\s+(?P<a>[a-z][a-z_ ]{2,30}?)\s+plus\s+(?:the\s+|its\s+)?`?(?P<b>[a-z][a-z0-9_]*)`?\s+(?:must\s+not|may\s+not|"
                         r"cannot|can't|should\s+not|never)\s+(?:fall|be|land|come|end)\s+(?:after|later\s+than|past)\s+(?:the\s+)?"
                         r"`?(?P<c>[a-z][a-z0-9_]*)`?", re.I)
# A markdown table row giving the value a decision takes and when: "| advance | rubric total of 12 or more (out of 20) |"
_TABLE_ROW = re.compile(r"^\|\s*`?(?P<value>[a-z][\w-]{1,20})`?\s*\|\s*(?P<cond>[^|\n]{3,120}?)\s*\|", re.I | re.M)
_ROW_BOUND = re.compile(r"(?P<words>(?:[a-z_]+\s+){0,3}?[a-z_]+)\s+(?:of\s+|is\s+)?(?:(?P<n1>\d+(?:\.\d+)?)\s+or\s+(?P<dir1>more|higher|above|"
                        r"less|lower|below|fewer)|(?P<op>at\s+least|under|below|less\s+than|over|above|more\s+than)\s+(?P<n2>\d+(?:\.\d+)?))", re.I)
# "Never base a decision or its reason on age, graduation year, gender, nationality, family status or a photo"
_NOT_BASED_ON = re.compile(r"\b(?:never|do\s+not|don'?t|must\s+not)\s+base\s+[^.;:\n]{0,60}?\bon\s+(?P<things>[a-z ,/-]{3,160}?)(?=[.:;\n]|$)", re.I)


_SHARE_CAP = re.compile(r"\b(?P<deed>(?:[a-z]+\s+){0,2}?[a-z]+?)s?\s+(?:are|is)\s+(?:capped|limited)\s+at\s+(?P<share>half|a\s+third|one\s+third|"
                        r"a\s+quarter|one\s+quarter|two\s+thirds|\d{1,3}\s*%)\s+of\s+(?:the\s+|their\s+|its\s+|an?\s+)?(?:[a-z]+'s\s+)?"
                        r"(?P<what>(?:[a-z_]+\s+){0,3}?[a-z_]+)(?=\s*[-.,;:(]|\s*$)", re.I)


def _share_caps(text: str):
    for m in _SHARE_CAP.finditer(text):
        share = re.sub(r"\s+", " ", m.group("share").lower())
        value = SHARE_WORDS.get(share) or (float(share.rstrip("% ")) / 100 if share.rstrip("% ").isdigit() else None)
        deed = tuple(w for w in re.findall(r"[a-z]{3,}", m.group("deed").lower()) if w not in FILLER)
        what = tuple(w for w in re.findall(r"[a-z]{3,}", m.group("what").lower()) if w not in FILLER and w not in ("last", "latest"))
        if value and deed and what:
            yield m.group(0).strip(), deed, value, what


_TOO_LONG = re.compile(r"\b(?:an?|any)\s+[a-z]+\s+(?:that|which|who)\s+(?:has|have)\s+been\s+(?P<state>(?:[a-z]+\s+){1,3}?)for\s+more\s+than\s+"
                       r"(?P<n>\d+(?:\.\d+)?)\s+(?P<unit>minutes?|hours?|days?)\s+(?:must\s+not|may\s+not|cannot|can't|should\s+not|"
                       r"is\s+not\s+to)\s+be\b", re.I)
# Minutes in a unit as rules and field names write it (hours, hrs, h; minutes_on_shift).
MINUTES = {"minutes": 1, "minute": 1, "mins": 1, "min": 1, "hours": 60, "hour": 60, "hrs": 60, "h": 60, "days": 1440, "day": 1440}
# "converted with get_fx_rate at the arrival date - not today's rate": a reading called at a record's date.
_DATED_BY = re.compile(r"`?(?P<tool>[a-z][a-z0-9]*_[a-z0-9_]+)`?\s+(?:at|as\s+of|on|for)\s+the\s+(?:[a-z]+'s\s+)?(?P<word>[a-z]{4,})"
                       r"(?:[\s_-]+date|[\s_-]+day)\b", re.I)


_ASKING = re.compile(r"^(?:start\s+with|begin\s+with|first,?\s+)?\s*(?:check|run|call|find|look\s+up|read|get|search|use|pull|verify|"
                     r"confirm|screen|query|fetch|start\s+with|begin\s+with)\b", re.I)


def _procedure(text: str) -> tuple[tuple[str, bool], ...]:
    """The steps of a procedure the instructions lay out as a table's rows ("| AD/CVD | Check get_adcvd ... |"), in
    order. (A numbered list is as often a list of separate rules - "2. Verify ... before any transfer", "4. ... must be
    frozen with freeze_account" - as a procedure: not read as one.)"""
    steps: list[tuple[str, bool]] = []
    for line in text.split("\n"):
        if not line.lstrip().startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        body = cells[-1]
        names = TOOL_NAME.findall(body)
        if not names:
            continue
        first = body[:body.find(names[0])]
        asked = bool(_ASKING.match(body)) and not re.search(r"\b(?:if|when|unless|only|where)\b", first, re.I)
        steps += [(n, asked and i == 0) for i, n in enumerate(dict.fromkeys(names)) if n not in {s for s, _a in steps}]
    return tuple(steps) if len(steps) >= 3 else ()


def _table_rows(text: str):
    for m in _TABLE_ROW.finditer(text):
        bound = _ROW_BOUND.search(m.group("cond"))
        if bound is None or m.group("value").lower() in ("step", "rule", "when", "decision", "if", "field", "name"):
            continue
        words = tuple(w for w in re.findall(r"[a-z]{3,}", bound.group("words").lower()) if w not in FILLER)
        if bound.group("n1"):
            above, number = bound.group("dir1").lower() in ("more", "higher", "above"), float(bound.group("n1"))
        else:
            op = bound.group("op").lower()
            above, number = op in ("at least", "over", "above", "more than"), float(bound.group("n2"))
            if op in ("over", "above", "more than"):
                number += 1e-9  # (strictly past it)
            elif op in ("under", "below", "less than"):
                number -= 1e-9
        if words:
            yield m.group(0).strip(), m.group("value").lower(), words, above, number


class Row(NamedTuple):
    """A row of a markdown table in instructions: its first cell as written, the range of a number it covers when it
    is a band ("24 to under 48 hours": 24, 48, "hour"), and each later cell's figure (a percentage or an amount)."""

    key: str
    low: float | None
    high: float | None  # (exclusive when the band says "under": 24 to under 48 hours covers 24 up to 47.99)
    unit: str | None
    figures: tuple[tuple[str, float] | None, ...]  # per later column: ("%", 50.0), ("$", 25.0) or None


@functools.lru_cache(maxsize=64)
def tables(text: str) -> tuple[tuple[Row, ...], ...]:
    """The markdown tables of an instructions text, each as its rows (header and rule lines aside)."""
    out = []
    for block in re.findall(r"(?:^[ \t]*\|.*\|[ \t]*$\n?){3,}", text, re.M) if "|" in text else ():
        lines = [line.strip().strip("|") for line in block.strip().splitlines()]
        # (a band's unit may stand in the header only: "| Days before sailing | ..." over "| 14-29 | ...")
        named = re.match(r"\s*([a-z]{3,})", lines[0].split("|")[0].lower())
        rows = []
        for line in lines[1:]:
            cells = [c.strip() for c in line.split("|")]
            if not cells or re.fullmatch(r"[\s:-]*", "".join(cells)):
                continue  # the rule under the header
            low, high, unit = _band(cells[0])
            unit = unit or (named.group(1) if named and low is not None else None)
            rows.append(Row(cells[0], low, high, unit, tuple(_figure(c) for c in cells[1:])))
        if len(rows) >= 2:
            out.append(tuple(rows))
    return tuple(out)


def _band(cell: str) -> tuple[float | None, float | None, str | None]:
    """The range of a number a table's first cell covers: "24 to under 48 hours", "14-29 days", "under 24 hours",
    "48 hours or more", "60+" - else (None, None, None)."""
    low = cell.lower()
    if m := re.search(r"(\d+(?:\.\d+)?)\s*(?:to\s+(?P<under>under|less\s+than)\s+|[-\u2013]|to\s+)(\d+(?:\.\d+)?)\s*([a-z%]+)?", low):
        return float(m.group(1)), float(m.group(3)) + (0 if m.group("under") else 1e-9), m.group(4)
    if m := re.search(r"\b(?:under|less\s+than|below|fewer\s+than)\s+(\d+(?:\.\d+)?)\s*([a-z%]+)?", low):
        return float("-inf"), float(m.group(1)), m.group(2)
    if m := re.search(r"(\d+(?:\.\d+)?)\s*([a-z%]+)?\s+or\s+(?:more|over|above|longer|later)\b", low):
        return float(m.group(1)), float("inf"), m.group(2)
    if m := re.search(r"\b(?:at\s+least|over|more\s+than|above)\s+(\d+(?:\.\d+)?)\s*([a-z%]+)?", low):
        return float(m.group(1)) + (0 if m.group(0).startswith("at") else 1e-9), float("inf"), m.group(2)
    if m := re.fullmatch(r"\s*(\d+(?:\.\d+)?)\+\s*([a-z%]+)?\s*", low):
        return float(m.group(1)), float("inf"), m.group(2)
    return None, None, None


def _figure(cell: str) -> tuple[str, float] | None:
    """A table cell's figure: its first percentage ("50% of the lesson price"), else its first amount ("GBP 25.00")."""
    if m := re.search(r"(\d+(?:\.\d+)?)\s*%", cell):
        return "%", float(m.group(1))
    if m := MONEY_FIGURE.search(cell):
        return "$", float(m.group(1).replace(",", ""))
    return None


# An amount of money as texts write it: "$12.00", "GBP 25.00", "\u00a31,250".
MONEY_FIGURE = re.compile(r"(?:[$\u00a3\u20ac]|\b(?:GBP|USD|EUR|CAD|AUD)\s?)(\d[\d,]*(?:\.\d+)?)")


# "Every interview panel must include at least one interviewer with fairness_trained: true": a list an action needs
# one member of in a state.
_MUST_INCLUDE = re.compile(r"\bmust\s+(?:include|have|contain|list)\s+at\s+least\s+one\s+[a-z]+\s+(?:with|whose|who\s+has|that\s+has)\s+"
                           r"`?(?P<field>[a-z][a-z0-9]*_[a-z0-9_]+)`?\s*(?:[:=]|\bis\b|\bof\b|set\s+to)\s*['\"`]?(?P<value>[\w.-]+)", re.I)
# "If the account has more than one line, confirm which line before you change a plan on it": a question owed.
_WHICH = re.compile(r"\b(?:more\s+than\s+one|several|multiple|two\s+or\s+more)\s+(?P<noun>[a-z]+(?:\s+(?!on\b|and\b|in\b|at\b|for\b|"
                    r"with\b|but\b|or\b|to\b|that\b)[a-z]+){0,2})\b[^.\n]{0,80}?\b(?:confirm|ask|check|clarify|verify)\b[^.\n]{0,60}?"
                    r"\bbefore\s+(?:you\s+)?(?P<verb>[a-z]{3,})", re.I)
# "Run check_sanctions on the seller before filing", "Run check_interactions ... before every refill": a call the
# rules ask for before each deed of a kind ("~" and the deed's stem in Rules.before_call).
_CALL_BEFORE = re.compile(r"\b(?:run|call|use|check|do)\s+`?(?P<need>[a-z][a-z0-9]*_[a-z0-9_]+)`?[^.;|\n]{0,80}?\bbefore\s+"
                          r"(?:every\s+|each\s+|any\s+|you\s+|the\s+|a\s+|an\s+)?(?P<deed>[a-z]{3,})", re.I)
# "Before assigning, request a lockout/tagout of the feeder with request_lockout": the same, the deed first.
_BEFORE_DEED = re.compile(r"\bbefore\s+(?!calling\b|using\b|running\b|invoking\b|answering\b|replying\b|responding\b)(?P<deed>[a-z]{3,}ing)\b\s*,?[^.;|\n]{0,80}?\b(?:with|using|via|call|run)\s+`?"
                          r"(?P<need>[a-z][a-z0-9]*_[a-z0-9_]+)`?", re.I)
_NOT_A_DEED = frozenset("anything something you the a an it that this then".split())
# "Nothing leaves the building before check_conflicts has been run": any action waits for a call.
_NOTHING_BEFORE = re.compile(r"\bnothing\b[^.;\n]{0,60}?\bbefore\s+(?:you(?:'ve|\s+have)?\s+)?(?:run\s+|call\s+|called\s+|used\s+)?"
                             r"`?(?P<need>[a-z][a-z0-9]*_[a-z0-9_]+)`?", re.I)


_NOT_A_VERB = frozenset("are is be for when if once from the a an to of on in with by after before".split())
# A tool's name as instructions write it: search_catalog, get_canary_metrics (lower case, words joined by _).
TOOL_NAME = re.compile(r"(?<![\w-])[a-z][a-z0-9]*_[a-z0-9_]+(?![\w-])")


def sentence_at(text: str, start: int, end: int) -> tuple[int, int]:
    """Where the sentence holding text[start:end] begins and ends (a line, or up to a full stop and a space)."""
    ends = [i for i in (text.find("\n", end), text.find(". ", end)) if i >= 0]
    return max(text.rfind("\n", 0, start), text.rfind(". ", 0, start)) + 1, min(ends, default=len(text))


def _on_file(text: str):
    if not re.search(r"\b(?:on\s+file|on\s+record|in\s+place|recorded|in\s+the\s+system)\b", text):
        return
    for m in _ON_FILE.finditer(text):
        start, end = sentence_at(text, m.start(), m.end())
        after = _BARRING.search(text, m.end(), end)
        if after is None:
            continue
        things = tuple(w for w in m.group("thing").lower().split() if len(w) >= 4 and w not in _PLAIN_ADJECTIVES)
        # the records the rule speaks of, listed in a parenthesis before it: "A specialist visit (cardiology, dermatology)"
        aside = re.search(r"\(([^)]{3,80})\)", text[start:m.start()])
        scope = tuple(re.findall(r"[a-z]{4,}", aside.group(1).lower())) if aside else ()
        if things:
            yield text[start:end].strip(), _stem(after.group(1)), things, scope


def _field_gates(text: str):
    for m in _FIELD_GATE.finditer(text):
        whose = _WHOSE.search(m.group("cond"))
        bound = _number(whose.group("bound")) if whose else None
        scope = (whose.group("measure").lower().split()[-1], whose.group("op").lower().split()[0] in ("over", "above", "more", "greater"),
                 bound) if whose and bound is not None else None
        yield m.group(0).strip(), m.group("verb").lower(), m.group("field"), m.group("value").strip().lower(), scope


def _net_of(text: str):
    for m in _NET_OF.finditer(text):
        # the gross: the last word before "less", a parenthesis aside ("the damage estimate (estimate_damage)")
        words = re.findall(r"[a-z_]{4,}", re.sub(r"\([^)]*\)", " ", m.group(1)).lower())
        if words and words[-1] not in ("than", "that", "this", "what", "amount") and m.group(2).lower() != "than":
            yield m.group(0).strip(), words[-1], m.group(2).lower()


# "Work, travel or a busy diary are not emergencies", "A poor forecast alone is not a weather cancellation": a
# sentence opening on the reasons (gated on "is/are not" first: this one opens on free words)
_NOT_REASON_GATE = re.compile(r"\b(?:are|is)\s+(?:not|never|no)\s|\bnot\s+for\s", re.I)
_NOT_REASONS = re.compile(r"(?:^|(?<=[.!?:]\s)|(?<=\d\.\s)|(?<=\s[-\u2013\u2014]\s))(?P<list>[A-Z][\w' ,/-]{2,90}?)\s+"
                          r"(?:alone\s+|on\s+its\s+own\s+|by\s+itself\s+)?(?:are|is)\s+(?:not|never|no)\s+(?:an?\s+)?"
                          r"(?P<what>[a-z][a-z -]{2,40}?)(?=\s*(?:[.;:(]|$|\s[-\u2013\u2014]\s|,\s))", re.M)
# "It is waived only for patrons whose type is faculty - not for teaching assistants, thesis deadlines or any other
# reason": the exception is the word before "only", the reasons come after "not for".
_NOT_FOR = re.compile(r"\b(?:is|are|be)\s+(?P<what>[a-z]{4,}ed)\s+only\s+(?:for|when|if|to)\b[^.\n]{0,120}?"
                      r"(?:\s[-\u2013\u2014]|[,;])\s*(?:and\s+|but\s+)?not\s+(?:for|on|because\s+of|over)\s+"
                      r"(?P<list>[^.;\n]{3,120}?)(?=[.;\n]|$)", re.I)
# The exception a rule grants: "is waived only", "only ... may sleep aboard".
_GRANT_WORD = re.compile(r"\b(?:is|are|be)\s+(?P<done>waived|exempt(?:ed)?|refunded|allowed|permitted|accepted|free)\s+only\b|"
                         r"\bonly\b[^.\n]{0,160}?\b(?:may|can)\s+(?P<deed>[a-z]{3,}(?:\s+(?!in\b|on\b|at\b|for\b|from\b|with\b|"
                         r"and\b|or\b|if\b|when\b|the\b|a\b)[a-z]{3,})?)", re.I)
# The field it rests on: "the booking's operator_change is true", "(`owner.member` is true)", "whose type is faculty".
_GRANT_FIELD = re.compile(r"`?\b(?P<field>[a-z][a-z0-9]*(?:[._][a-z0-9]+)+)`?\s+(?:is|=|==)\s+['\"`]?(?P<value>[a-z0-9][\w-]*)|"
                          r"\bwhose\s+`?(?P<whose>[a-z][a-z0-9_.]*)`?\s+(?:is|are)\s+['\"`]?(?P<is>[a-z0-9][\w-]*)", re.I)
# A rule held to a time as well as a record: "From November to March only members may ...".
_SCOPED = re.compile(r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December|"
                     r"winter|summer|season|weekends?|holidays?|between\s+\d)\b")
# words of a listed reason that tell nothing of it
_NO_REASON_WORDS = frozenset({"alone", "just", "only", "their", "your", "they", "them", "reason", "reasons", "such", "things"})


def _criteria(text: str) -> tuple[tuple[str, tuple[str, ...], float, bool], ...]:
    """Each pass mark written in a clause about a check or a verdict - not a trigger ("if CPU is above 85%, scale
    out")."""
    out = []
    for rule in _COMPARED.finditer(text):
        first = max((m.end() for m in NOTE_CLAUSE.finditer(text, 0, rule.start())), default=0)
        last = next((m.start() for m in NOTE_CLAUSE.finditer(text, rule.end())), len(text))
        if not _VERDICT.search(text, first, last) or re.match(r"\s*(?:\d+\.\s*)?(?:if|when|whenever|once)\b", text[first:], re.I):
            continue
        before = re.findall(r"[a-z0-9]+", text[max(first, rule.start() - 40):rule.start()].lower())
        words = tuple(w for w in before[-3:] if len(w) >= 3 and w not in FILLER and w not in _MEASURE_FILLER)
        if words:
            below = rule.group(1).lower().split()[0] in ("under", "below", "less") or rule.group(1).lower() == "at most"
            out.append((text[max(first, rule.start() - 40):rule.end()].strip(), words, float(rule.group(2)), below))
    return tuple(out)


def _only(text: str):
    for rule in _ONLY_CLASS.finditer(text):
        sentence_start = max(text.rfind("\n", 0, rule.start()), text.rfind(". ", 0, rule.start())) + 1
        sentence = text[sentence_start:text.find("\n", rule.end()) if "\n" in text[rule.end():] else len(text)].lower()
        yield rule.group(0).strip(), rule.group(1), rule.group(2).lower().rstrip("s"), sentence


def _without(text: str):
    for rule in _WITHOUT.finditer(text):
        verb = rule.group(1).lower()
        # the words between the verb and "without" name the thing the rule speaks of ("reset MFA": reset_mfa)
        between = text[rule.start(1) + len(verb):rule.start(2)].lower().replace("without", "")
        yield rule.group(0).strip(), verb, rule.group(2).lower().split()[-1].rstrip("s"), tuple(re.findall(r"[a-z]{2,}", between))


@functools.lru_cache(maxsize=256)
def window(text: str, forms: str) -> tuple[str, float, str] | None:
    """(said, the window in days, the event's first letters) of the rule limiting an action (`forms`: its words as
    a regex alternation) to a time after an event ("refunds only within 30 days of delivery": 30, "deliv"), or None."""
    rule = re.search(_WINDOW.format(forms), text, re.I) if "within" in text else None
    if rule is None:
        return None
    return rule.group(0).strip(), int(rule.group(1)) * PERIOD_DAYS[re.sub(r"\s+", " ", rule.group(2).lower())], rule.group(3).lower()[:5]


@functools.lru_cache(maxsize=256)
def count(text: str, forms: str) -> tuple[str, int, str] | None:
    """(said, how many, per what) of the rule counting an action (`forms` as for `window`) per thing or time ("one
    exchange per order": 1, "order"; "at most one password reset per employee per day": 1, "day"), or None."""
    rule = re.search(_PER.format(forms), text, re.I) if " per " in text else None
    if rule is None:
        return None
    said = re.sub(r"\s+", " ", rule.group(1).lower())
    limit = _COUNT_WORDS.get(said) or (int(said) if said.isdigit() else None)
    if limit is None:
        return None
    # per what: a time when the rule names one ("per employee per day": day), else the thing
    per = next((p for p in (rule.group(3), rule.group(2)) if p and p.lower() in PERIOD_DAYS), rule.group(2))
    return rule.group(0).strip(), limit, per.lower()
