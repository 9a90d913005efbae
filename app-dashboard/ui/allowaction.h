#pragma once

#include "app-dashboard/core/plaintooltip.h"

#include <QAbstractButton>

namespace cloop::dashboard {

// Enables an action or not, and says why in its tooltip and to screen
// readers: what it does when it can be used, why not when it cannot.
inline void allowAction(
    QAbstractButton *button, bool allowed, const QString &does, const QString &whyNot)
{
    button->setEnabled(allowed);
    const QString words = allowed ? does : whyNot;
    button->setToolTip(plainToolTip(words));
    button->setAccessibleDescription(words);
}

} // namespace cloop::dashboard
