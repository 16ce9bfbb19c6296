-- agentotel_run_name(root_name): the name of a run another instrumentation recorded, from its root span's name:
-- without the instance ids in it (CrewAI's `Crew_<uuid>.kickoff`), so runs of one agent share a name and a
-- history. store/dialects.py run_name() is the same rule in Python (INSTANCE_ID: the pattern both use).
CREATE OR REPLACE TEMP MACRO agentotel_run_name(root_name) AS
    coalesce(nullif(regexp_replace(root_name, getvariable('INSTANCE_ID'), '', 'g'), ''), root_name);
