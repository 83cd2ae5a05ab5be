/** One doctor check. */
export interface DoctorCheck {
  name: string
  status: 'ok' | 'warn' | 'fail'
  detail: string
  fix?: string
}
