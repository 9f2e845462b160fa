//! Taking the faults a test injected (failures, delays, dropped connections) as calls arrive.

use super::*;

impl State {
    /// Take one injected failure for `method`, if any.
    pub fn take_fail(&mut self, method: &str) -> Option<FailFault> {
        let fault = self.fail.get_mut(method)?;
        if fault.remaining == 0 {
            return None;
        }
        fault.remaining -= 1;
        let taken = fault.clone();
        if fault.remaining == 0 {
            self.fail.remove(method);
        }
        Some(taken)
    }

    pub fn take_delay(&mut self, method: &str) -> Option<Duration> {
        let fault = self.delay.get_mut(method)?;
        let delay = fault.delay;
        match &mut fault.remaining {
            None => {}
            Some(0) => {
                self.delay.remove(method);
                return None;
            }
            Some(n) => {
                *n -= 1;
                if *n == 0 {
                    self.delay.remove(method);
                }
            }
        }
        Some(delay)
    }

    pub fn take_drop(&mut self, method: &str) -> bool {
        take_one(&mut self.drop, method)
    }

    pub fn take_garble(&mut self, method: &str) -> bool {
        take_one(&mut self.garble, method)
    }
}

/// Counts down the fault armed for `method` in `faults`: whether this call gets it.
fn take_one(faults: &mut std::collections::HashMap<String, u32>, method: &str) -> bool {
    match faults.get_mut(method) {
        Some(n) if *n > 0 => {
            *n -= 1;
            if *n == 0 {
                faults.remove(method);
            }
            true
        }
        _ => false,
    }
}
