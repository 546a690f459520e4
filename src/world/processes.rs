//! What a lost process sets off in the rest of the cluster, the same in both modes. The process
//! itself acts first (`TaskManager::lose`, `JobMaster::crash`, each in its actor's module);
//! what follows is no actor's decision but the cluster's: the others learn of the loss only
//! when their heartbeats time out, and the deployment starts a replacement.

use super::Event;
use crate::taskmanager::Lost;
use sim::{Duration, Scheduler};

/// TaskManager process `lost` died: the JobMaster alive now (its incarnation, if one is)
/// notices at its heartbeat timeout (P1.8, P2.3), and a replacement process starts
/// `restart_after` later.
pub(crate) fn task_manager_lost(
    sched: &mut Scheduler<'_, Event>,
    lost: Lost,
    jobmaster: Option<u32>,
    heartbeat: Duration,
    restart_after: Duration,
) {
    let Lost {
        task_manager,
        process,
    } = lost;
    if let Some(incarnation) = jobmaster {
        sched.after(
            heartbeat,
            Event::TaskManagerTimeout {
                task_manager,
                dead: process,
                incarnation,
            },
        );
    }
    sched.after(restart_after, Event::TaskManagerRestart { task_manager });
}

/// JobMaster `incarnation` crashed: the TaskManagers notice at their heartbeat timeout (what
/// they then do differs by mode and failover), and a new JobMaster is elected
/// `restart_after` later (HA).
pub(crate) fn jobmaster_lost(
    sched: &mut Scheduler<'_, Event>,
    incarnation: u32,
    heartbeat: Duration,
    restart_after: Duration,
) {
    sched.after(heartbeat, Event::JobMasterTimeout { incarnation });
    sched.after(restart_after, Event::JobMasterElected);
}
