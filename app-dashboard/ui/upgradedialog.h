#pragma once

#include "app-dashboard/ui/formdialog.h"

#include "common/api/executor.h"

class QLineEdit;

namespace cloop::dashboard {

// Upgrade: asks a connected executor's device to upgrade itself to a target
// (latest by default). The device's own settings decide: its refusal (not
// opted in, another channel, a downgrade) is shown in place.
class UpgradeDialog final : public FormDialog
{
    Q_OBJECT

public:
    UpgradeDialog(HubApi *api, const api::Executor &executor, QWidget *parent = nullptr);

    QLineEdit *targetEdit() const { return m_target; }
    QString problem() const override;

protected:
    void carryOut(QObject *context, HubApi::Callback done) override;
    void succeeded(const QJsonObject &answer) override;

private:
    HubApi *m_api;
    qint64 m_id;
    QLineEdit *m_target;
};

// The Version cell: the version and, at a glance, the skew or the upgrade
// under way ("0.3.0 · 0.4.0 offered", "0.3.0 · upgrading to latest").
QString describeSoftware(const api::EnrolledDaemon &daemon);

} // namespace cloop::dashboard
