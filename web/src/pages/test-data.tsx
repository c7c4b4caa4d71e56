import { useEffect, useState } from 'preact/hooks';
import { api, must, type Schemas } from '../api';
import { Confirm, ProblemView, useAction } from '../ui';

type Job = Schemas['Job'];

/** How often a deletion under way is asked how far it has come. */
const POLL_MS = 1000;

/** "Delete all test data", in test mode (admins): the deletion runs as a job, whose progress is shown until it ends. */
export function DeleteTestData() {
  const [open, setOpen] = useState(false);
  const [job, setJob] = useState<Job | null>(null);
  const action = useAction();
  const done = job?.status === 'succeeded' || job?.status === 'failed';
  useEffect(() => {
    if (!job || done) return;
    const timer = setTimeout(() => void must(api.GET('/jobs/{id}', { params: { path: { id: job.id } } })).then(setJob, () => undefined), POLL_MS);
    return () => clearTimeout(timer);
  }, [job, done]);
  const start = () =>
    action.run(async () => {
      setJob(await must(api.DELETE('/test-data')));
      setOpen(false);
      return null;
    });
  const counts = job && `${job.progress.objects ?? 0} objects and ${job.progress.events ?? 0} events deleted`;
  return (
    <section aria-labelledby="test-data">
      <h2 id="test-data">Test data</h2>
      <p>Delete every test object and test event (with their deliveries). Test keys and test webhooks stay; live data is never touched.</p>
      <button type="button" class="danger" disabled={Boolean(job && !done)} onClick={() => setOpen(true)}>
        Delete all test data
      </button>
      {job && (
        <p role="status">
          {job.status === 'succeeded' ? `Done: ${counts}.` : job.status === 'failed' ? `The deletion failed (${job.error ?? 'no reason given'}) after ${counts}.` : `Deleting: ${counts} so far…`}
        </p>
      )}
      <Confirm open={open} title="Delete all test data?" confirm="Delete test data" onConfirm={() => void start()} onCancel={() => setOpen(false)}>
        <p>Every test object and test event of this workspace is deleted, in the background. This cannot be undone.</p>
        <ProblemView problem={action.problem} />
      </Confirm>
    </section>
  );
}
