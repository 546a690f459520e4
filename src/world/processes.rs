//! What a lost process sets off in the rest of the cluster, the same in both modes. The process
//! itself acts first (`TaskManager::lose`, `JobMaster::crash`, each in its actor's module);
//! what follows is no actor's decision but the cluster's: the others learn of the loss only
//! when their heartbeats time out, and the deployment starts a replacement.

use super::{Act, Event};
use crate::taskmanager::Lost;
use sim::Duration;

/// TaskManager process `lost` died: the JobMaster alive now (its incarnation, if one is)
/// notices at its heartbeat timeout (P1.8, P2.3), and a replacement process starts
/// `restart_after` later.
pub(super) fn task_manager_lost(
    world: &mut impl Act,
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
        world.after(
            heartbeat,
            Event::TaskManagerTimeout {
                task_manager,
                dead: process,
                incarnation,
            },
        );
    }
    world.after(restart_after, Event::TaskManagerRestart { task_manager });
}

/// JobMaster `incarnation` crashed: the TaskManagers notice at their heartbeat timeout (what
/// they then do differs by mode and failover), and a new JobMaster is elected
/// `restart_after` later (HA).
pub(super) fn jobmaster_lost(
    world: &mut impl Act,
    incarnation: u32,
    heartbeat: Duration,
    restart_after: Duration,
) {
    world.after(heartbeat, Event::JobMasterTimeout { incarnation });
    world.after(restart_after, Event::JobMasterElected);
}
