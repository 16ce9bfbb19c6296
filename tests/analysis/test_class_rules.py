"""Written rules that bar an action for one class of records or people (tau-bench's policy violations, heldout11's
misses, in other trades): a non-refundable booking cancelled, a perk given to a customer of a tier the rule leaves
out; beside the same action on a record of another class. And a figure the answer works out in its own words
("2 nights x 120 EUR"), grounded as far as its factors are. Hand-built runs."""

from __future__ import annotations

import pytest

from agentotel.analysis.detectors import detect, format_findings
from test_data_agent import _conversation

HOTEL = ("You are the front desk of Harbour Hotels. A non_refundable booking cannot be cancelled. Before any change tell the "
         "guest what you will do and wait for their explicit 'yes'.\nUpgrades: only platinum guests may get a free upgrade; "
         "silver and gold guests pay the difference.")


def _found(run, kind):
    found = detect(run)
    return [(f.index, f.layer) for f in found if f.kind == kind], format_findings(found)


def _cancel(rate: str):
    booking = {"booking_id": "HB-3301", "guest_id": "G-118", "rate": rate, "nights": 2, "total": 240.0}
    return _conversation(("user", "Please cancel booking HB-3301."), ("get_booking", {"booking_id": "HB-3301"}, booking),
                         ("assistant", "Booking HB-3301 (2 nights, 240.00 EUR) can be cancelled. Shall I go ahead?"),
                         ("user", "Yes, please."), ("cancel_booking", {"booking_id": "HB-3301"}, {"status": "cancelled"}),
                         system=HOTEL, answer="Booking HB-3301 is cancelled.")


@pytest.mark.parametrize("rate,barred", [("non_refundable", True), ("flexible", False)])
def test_an_action_the_rules_bar_for_a_class_of_record_is_a_policy_violated_on_that_class_only(rate, barred):
    found, shown = _found(_cancel(rate), "policy_violated")
    assert found == ([(4, "model")] if barred else []), shown


def _upgrade(tier: str):
    guest = {"guest_id": "G-118", "name": "Ines Roy", "tier": tier}
    return _conversation(("user", "I'm guest G-118; can I get a free upgrade for booking HB-3301?"),
                         ("get_guest", {"guest_id": "G-118"}, guest),
                         ("assistant", "I can upgrade booking HB-3301 to a sea-view room at no charge. Shall I go ahead?"),
                         ("user", "Yes, please."),
                         ("upgrade_room", {"guest_id": "G-118", "booking_id": "HB-3301", "charge": 0}, {"status": "upgraded"}),
                         system=HOTEL, answer="Done: booking HB-3301 is upgraded.")


@pytest.mark.parametrize("tier,barred", [("gold", True), ("silver", True), ("platinum", False)])
def test_a_perk_the_rules_keep_for_one_tier_given_to_another_is_a_policy_violated(tier, barred):
    found, shown = _found(_upgrade(tier), "policy_violated")
    assert found == ([(4, "model")] if barred else []), shown


@pytest.mark.parametrize("said,grounded", [
    ("Your stay comes to 240.00 EUR (2 nights x 120 EUR).", True),
    ("Your stay comes to 260.00 EUR (2 nights x 130 EUR).", False),  # a factor no source gives
])
def test_a_figure_worked_out_in_the_answer_is_grounded_as_far_as_its_factors(said, grounded):
    booking = {"booking_id": "HB-3301", "nights": 2, "room": "double"}
    run = _conversation(("user", "What will booking HB-3301 cost? The double room is 120 EUR a night."),
                        ("get_booking", {"booking_id": "HB-3301"}, booking), answer=said, system="You are the front desk.")
    assert bool(_found(run, "ungrounded_answer")[0]) != grounded, _found(run, "ungrounded_answer")[1]


@pytest.mark.parametrize("offer,reply,swapped", [
    ("Booking HB-3301 (2 nights, 240.00 EUR) can be cancelled. Shall I go ahead?", "Yes, please.", True),
    # the miss said, or the user naming the other booking themselves
    ("I couldn't find booking HB-3310; you have HB-3301 (2 nights). Shall I cancel that one?", "Yes, please.", False),
    ("Booking HB-3301 (2 nights, 240.00 EUR) can be cancelled. Shall I go ahead?", "Yes, cancel HB-3301.", False),
])
def test_another_record_acted_on_in_place_of_the_one_the_user_named_is_a_wrong_target(offer, reply, swapped):
    booking = {"booking_id": "HB-3301", "guest_id": "G-118", "rate": "flexible", "nights": 2, "total": 240.0}
    run = _conversation(("user", "Please cancel booking HB-3310."), ("get_guest", {"guest_id": "G-118"}, {"bookings": ["HB-3301"]}),
                        ("get_booking", {"booking_id": "HB-3301"}, booking), ("assistant", offer), ("user", reply),
                        ("cancel_booking", {"booking_id": "HB-3301"}, {"status": "cancelled"}),
                        system=HOTEL, answer="Booking HB-3301 is cancelled.")
    found, shown = _found(run, "wrong_target")
    assert found == ([(6, "model")] if swapped else []), shown


@pytest.mark.parametrize("between,reversed_", [
    ([], True),  # pressed, and the refusal turned with nothing new
    ([("get_booking", {"booking_id": "HB-3301"}, {"booking_id": "HB-3301", "rate": "flexible", "nights": 2})], False),  # the facts changed
])
def test_an_action_refused_by_the_rules_then_taken_when_the_user_pressed_is_a_policy_violated(between, reversed_):
    booking = {"booking_id": "HB-3301", "rate": "non_refundable", "nights": 2}
    run = _conversation(("user", "Please cancel booking HB-3301."), ("get_booking", {"booking_id": "HB-3301"}, booking),
                        ("assistant", "I'm sorry, booking HB-3301 cannot be cancelled: it is a non-refundable rate."),
                        ("user", "Come on, please make an exception just this once."), *between,
                        ("cancel_booking", {"booking_id": "HB-3301"}, {"status": "cancelled"}),
                        system="You are the front desk.", answer="Booking HB-3301 is cancelled.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(4, "model")] if reversed_ else []), shown


@pytest.mark.parametrize("rate,said,misread", [
    ("non_refundable", "Booking HB-3301 has a flexible rate with free cancellation", False),  # not a yes/no field
    ("no", "Booking HB-3301 has cancellation insurance, so it can be cancelled. Shall I go ahead?", True),
    ("yes", "Booking HB-3301 has cancellation insurance, so it can be cancelled. Shall I go ahead?", False),
    ("yes", "Booking HB-3301 has no insurance, so it cannot be cancelled.", True),
])
def test_a_yes_no_fact_stated_the_other_way_before_acting_is_answer_misread(rate, said, misread):
    booking = {"booking_id": "HB-3301", "insurance": rate, "nights": 2}
    run = _conversation(("user", "Please cancel booking HB-3301."), ("get_booking", {"booking_id": "HB-3301"}, booking),
                        ("assistant", said), ("user", "Yes, please."),
                        ("cancel_booking", {"booking_id": "HB-3301"}, {"status": "cancelled"}),
                        system="You are the front desk.", answer="Booking HB-3301 is cancelled.")
    found, shown = _found(run, "answer_misread")
    assert bool(found) == misread, shown


IT = "You are the IT desk. Never delete a mailbox without a backup. Confirm nothing; the requests come from admins."


@pytest.mark.parametrize("turns,broken", [
    ([("delete_mailbox", {"mailbox": "ines.roy", "backup_id": ""}, {"status": "deleted"})], True),
    ([("create_backup", {"mailbox": "ines.roy"}, {"backup_id": "BK-9921"}),
      ("delete_mailbox", {"mailbox": "ines.roy", "backup_id": "BK-9921"}, {"status": "deleted"})], False),
    # another thing deleted: the rule is about mailboxes
    ([("delete_alias", {"alias": "sales-old"}, {"status": "deleted"})], False),
])
def test_an_action_forbidden_without_a_thing_taken_without_it_is_a_policy_violated(turns, broken):
    run = _conversation(("user", "Ines Roy has left: remove her mailbox ines.roy and the sales-old alias."), *turns,
                        system=IT, answer="Done.")
    found, shown = _found(run, "policy_violated")
    assert bool(found) == broken, shown


@pytest.mark.parametrize("amount,broken", [(360.0, True), (240.0, False), (120.0, False)])
def test_an_amount_past_what_the_rules_cap_it_at_in_the_records_terms_is_a_policy_violated(amount, broken):
    booking = {"booking_id": "HB-3301", "nights": 2, "amount_paid": 240.0}
    run = _conversation(("user", "Refund booking HB-3301: the room was flooded."), ("get_booking", {"booking_id": "HB-3301"}, booking),
                        ("refund_booking", {"booking_id": "HB-3301", "amount": amount}, {"status": "refunded"}),
                        system="You are the front desk. Refund at most what the guest paid.", answer="Refunded.")
    found, shown = _found(run, "policy_violated")
    assert bool(found) == broken, shown


@pytest.mark.parametrize("status,broken", [("on_hold_chargeback", True), ("active", False)])
def test_an_action_barred_for_records_of_a_quoted_value_is_a_policy_violated(status, broken):
    rules = ("You run the payments desk. A card on hold for a chargeback (card_status 'on_hold_chargeback') must never be "
             "unlocked by the desk: send it to the disputes team.")
    card = {"card_id": "CD-4410", "holder": "Ines Roy", "card_status": status}
    run = _conversation(("user", "Please unlock card CD-4410."), ("get_card", {"card_id": "CD-4410"}, card),
                        ("unlock_card", {"card_id": "CD-4410"}, {"status": "active"}), system=rules, answer="Done.")
    found, shown = _found(run, "policy_violated")
    assert bool(found) == broken, shown


def test_an_id_the_models_words_contradict_at_the_call_is_its_wrong_target_not_an_invented_argument():
    from runs_build import llm, record, tool

    employee = {"employee_id": "E1042", "name": "Dana Reyes", "account_status": "locked"}
    run = record(llm(1, calls=[("get_employee", {"employee_id": "E1042"}, "g1")]),
                 tool(2, "get_employee", {"employee_id": "E1042"}, employee, requested_by=1, call_id="g1"),
                 llm(3, text="Unlocking account E1042 now.", calls=[("unlock_account", {"employee_id": "E1024"}, "u1")]),
                 tool(4, "unlock_account", {"employee_id": "E1024"}, {"status": "unlocked"}, requested_by=3, call_id="u1"),
                 llm(5, text="Your account is unlocked."), task="I'm E1042 and I'm locked out.")
    found = detect(run)
    at_call = [(f.kind, f.layer) for f in found if f.index == 3]
    assert ("wrong_target", "model") in at_call and not any(k == "invented_argument" for k, _ in at_call), format_findings(found)


@pytest.mark.parametrize("read,broken", [("My code is 482913.", False), ("My code is 482931.", True)])
def test_an_action_on_a_code_read_back_wrong_is_a_policy_violated(read, broken):
    run = _conversation(("user", "I forgot my PIN for card CD-4410."),
                        ("send_sms", {"to": "+44 20 7946 0321", "text": "Your verification code is 482913"}, {"status": "sent"}),
                        ("assistant", "I've texted you a code: please read it back."), ("user", read),
                        ("reset_pin", {"card_id": "CD-4410"}, {"status": "reset"}),
                        system="You are the card desk. Reset a PIN only when the caller reads back the code you texted.",
                        answer="Your PIN is reset.")
    found, shown = _found(run, "policy_violated")
    assert bool(found) == broken, shown


@pytest.mark.parametrize("closing,acted", [
    ("Great, that's all for now - thanks.", True),
    ("No, that's all - thanks.", True),  # the answer to "anything else?"
    ("Thanks! That's all, but can you also email the guest the invoice?", False),  # a last request
    ("No, I also need the invoice emailed to the guest.", False),
])
def test_an_action_after_the_user_closed_the_conversation_is_acted_after_done(closing, acted):
    run = _conversation(("user", "Cancel booking HB-3301."), ("cancel_booking", {"booking_id": "HB-3301"}, {"status": "cancelled"}),
                        ("assistant", "Booking HB-3301 is cancelled."), ("user", closing),
                        ("send_email", {"to": "ines@example.com", "body": "Your booking HB-3301 is cancelled."}, {"status": "sent"}),
                        system="You are the front desk.", answer="You're welcome!")
    found, shown = _found(run, "acted_after_done")
    assert bool(found) == acted, shown


def test_a_claim_in_an_earlier_turn_repeated_after_the_users_goodbye_is_found_where_it_was_first_made():
    from runs_build import definitions_attr

    said = "Booking HB-3301 is cancelled and the guest has been emailed."
    run = _conversation(("user", "Cancel booking HB-3301 and email the guest."),
                        ("cancel_booking", {"booking_id": "HB-3301"}, {"status": "cancelled"}),
                        ("assistant", said), ("user", "Great, that's all for now - thanks."), system="You are the front desk.", answer=said)
    offered = definitions_attr(*((n, {"type": "object"}) for n in ("cancel_booking", "send_email")))
    for step in run.steps:
        if step["type"] == "llm":
            run.span_attributes.setdefault(str(step["span_id"]), {}).update(offered)
    found = detect(run)
    assert [(f.index, f.kind) for f in found if f.kind in ("action_not_taken", "kept_going_after_answer")] == [(3, "action_not_taken")], \
        format_findings(found)


def test_an_id_nothing_gave_put_in_place_of_the_one_named_is_an_invented_argument_not_a_swap():
    run = _conversation(("user", "Please cancel booking HB-3310."), ("get_booking", {"booking_id": "HB-3310"}, {"error": "not found"}),
                        ("cancel_booking", {"booking_id": "HB-3391"}, {"status": "cancelled"}),
                        system=HOTEL, answer="Booking HB-3391 is cancelled.")
    found = detect(run)
    assert not [f for f in found if f.kind == "wrong_target"], format_findings(found)


@pytest.mark.parametrize("last,broken", [
    ("2026-05-14T09:40:00Z", True),  # already extended today
    ("2026-05-12T16:05:00Z", False),  # two days ago: allowed
    ("never", False),
])
def test_an_action_the_rules_allow_once_per_day_taken_again_that_day_is_a_policy_violated(last, broken):
    # "one ... per member per day" counted on the record's date of the action, not on a count field
    rules = ("You run the City Library loans desk. Today is 2026-05-14. At most one loan extension per member per day: "
             "if the member's last_loan_extension is today, refuse.")
    member = {"member_id": "M-5520", "name": "Aiko Brandt", "last_loan_extension": last, "loans": ["B-118"]}
    run = _conversation(("user", "I'm member M-5520, please extend my loan of B-118."),
                        ("get_member", {"member_id": "M-5520"}, member),
                        ("extend_loan", {"member_id": "M-5520", "book_id": "B-118"}, {"status": "extended", "due": "2026-05-28"}),
                        system=rules, answer="Done: B-118 is now due on 2026-05-28.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


# A warranty desk: a repair barred until an inspection is on the record, for costly repairs only; a kind of damage
# paid only with a cover.
WARRANTY = ("You are the warranty desk of Brightline Appliances.\n1. A repair whose quote is over $400 must not be "
            "authorized before a technician has inspected the unit (the case's inspection 'passed').\n2. Water damage is "
            "not covered unless the plan has the accident cover: decline such a case.")


@pytest.mark.parametrize("quote,inspection,broken", [
    (620.0, None, True),        # costly, never inspected
    (620.0, "passed", False),   # inspected
    (180.0, None, False),       # under the figure the rule is for
])
def test_an_action_barred_until_a_field_of_its_record_has_a_value_is_a_policy_violated_where_it_applies(quote, inspection, broken):
    case = {"case_id": "WC-3140", "plan_id": "PL-77", "cause": "motor failure", "inspection": inspection}
    run = _conversation(("user", "Please fix my washer, case WC-3140."), ("get_case", {"case_id": "WC-3140"}, case),
                        ("quote_repair", {"case_id": "WC-3140"}, {"case_id": "WC-3140", "quote": quote}),
                        ("authorize_repair", {"case_id": "WC-3140", "amount": quote}, {"status": "authorized"}),
                        system=WARRANTY, answer="Your repair is authorized.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(5, "model")] if broken else []), shown


@pytest.mark.parametrize("cause,covers,broken", [
    ("water damage after a pipe leak", [], True),
    ("water damage after a pipe leak", ["accident cover"], False),
    ("motor failure", [], False),
])
def test_a_payout_for_a_kind_of_loss_covered_only_with_a_cover_the_record_lacks_is_a_policy_violated(cause, covers, broken):
    case = {"case_id": "WC-3140", "plan_id": "PL-77", "cause": cause, "inspection": "passed"}
    plan = {"plan_id": "PL-77", "holder": "Dana Ortiz", "covers": covers}
    run = _conversation(("user", "Please settle case WC-3140."), ("get_case", {"case_id": "WC-3140"}, case),
                        ("get_plan", {"plan_id": "PL-77"}, plan),
                        ("approve_payout", {"case_id": "WC-3140", "amount": 250.0}, {"status": "approved"}),
                        system=WARRANTY, answer="Case WC-3140 is settled: 250.00 USD.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(5, "model")] if broken else []), shown


RETURNS = ("You are the returns desk. Today is 2026-12-04. A return requested more than 30 days after delivery is refused, "
           "unless the order's notes record a defect.")


@pytest.mark.parametrize("delivered,notes,broken", [
    ("2026-10-01", "", True),                       # 64 days
    ("2026-11-20", "", False),                      # 14 days
    ("2026-10-01", "defect reported on arrival", False),  # the exception
])
def test_a_payout_on_a_record_whose_dates_lie_further_apart_than_the_rules_allow_is_a_policy_violated(delivered, notes, broken):
    order = {"order_id": "#7710", "delivered_date": delivered, "requested_date": "2026-12-03", "notes": notes, "total": 59.0}
    run = _conversation(("user", "I'd like to return order #7710."), ("get_order", {"order_id": "#7710"}, order),
                        ("refund_order", {"order_id": "#7710", "amount": 59.0}, {"status": "refunded"}),
                        system=RETURNS, answer="Order #7710 is refunded: 59.00 EUR.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


PAYABLES = ("You are the payables agent.\n1. A payment over 2,000 EUR needs a manager approval: call get_approval and pass "
            "its approval_id to pay_vendor.\n2. A vendor flagged for fraud must be escalated; never pay it.")


@pytest.mark.parametrize("amount,approval,broken", [(3500.0, "", True), (3500.0, "AP-77", False), (900.0, "", False)])
def test_an_action_past_a_figure_without_the_thing_the_rules_say_it_then_needs_is_a_policy_violated(amount, approval, broken):
    vendor = {"vendor_id": "V-310", "name": "Delta Parts", "flags": []}
    run = _conversation(("user", "Please pay Delta Parts' invoice."), ("get_vendor", {"vendor_id": "V-310"}, vendor),
                        ("pay_vendor", {"vendor_id": "V-310", "amount": amount, "approval_id": approval}, {"status": "paid"}),
                        system=PAYABLES, answer="Paid.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("flags,broken", [(["fraud"], True), (["late_payer"], False)])
def test_an_action_the_rules_bar_on_a_record_a_flag_of_it_names_is_a_policy_violated(flags, broken):
    vendor = {"vendor_id": "V-310", "name": "Delta Parts", "flags": flags}
    run = _conversation(("user", "Please pay Delta Parts' invoice."), ("get_vendor", {"vendor_id": "V-310"}, vendor),
                        ("pay_vendor", {"vendor_id": "V-310", "amount": 400.0, "approval_id": ""}, {"status": "paid"}),
                        system=PAYABLES, answer="Paid.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown


@pytest.mark.parametrize("status,broken", [("returned", True), ("delivered", False)])
def test_an_action_on_a_record_already_in_a_state_the_rules_bar_it_again_in_is_a_policy_violated(status, broken):
    # the deed named as a noun of the tool (start_return: a return made)
    rules = "You are the returns desk. An order already returned or exchanged is not returned again."
    orders = {"orders": [{"order_id": "#8120", "item": "rain jacket", "total": 89.0, "status": status}]}
    run = _conversation(("user", "I want to send back the rain jacket from order #8120."),
                        ("list_orders", {"customer_id": "C-1"}, orders),
                        ("start_return", {"order_id": "#8120"}, {"status": "label_sent"}),
                        system=rules, answer="A return label for #8120 is on its way.")
    found, shown = _found(run, "policy_violated")
    assert found == ([(3, "model")] if broken else []), shown
