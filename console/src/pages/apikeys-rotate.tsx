import { useState } from 'preact/hooks';
import { ConfirmButton } from '../components.tsx';

/**
 * How long a rotated key's old secret keeps working: from none to the API's most (`grace_seconds`
 * is 0 … 7 days, docs/apikeys.md), so the user can match the time its deployments take to switch.
 */
export const graceChoices = [
  { seconds: 0, label: 'none (stops within 30 seconds)' },
  { seconds: 3_600, label: '1 hour' },
  { seconds: 86_400, label: '24 hours' },
  { seconds: 604_800, label: '7 days' },
] as const;

const defaultGrace = 3_600;

/** The row's Rotate button; confirming asks how long the old secret may still be used. */
export function RotateButton({
  name,
  busy,
  onRotate,
}: {
  name: string;
  busy: boolean;
  onRotate: (graceSeconds: number) => void;
}) {
  const [grace, setGrace] = useState<number>(defaultGrace);
  return (
    <ConfirmButton
      label="Rotate"
      name={`Rotate ${name}`}
      question={
        <>
          New secret? The old one works{' '}
          <select
            aria-label={`Old secret of ${name} keeps working for`}
            value={String(grace)}
            onChange={(event) => setGrace(Number(event.currentTarget.value))}
          >
            {graceChoices.map((choice) => (
              <option key={choice.seconds} value={String(choice.seconds)}>
                {choice.label}
              </option>
            ))}
          </select>
        </>
      }
      busy={busy}
      onConfirm={() => onRotate(grace)}
    />
  );
}
